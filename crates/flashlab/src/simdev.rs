//! TEMPORARY shim until the simulator crate's API lands.
pub struct ProfileSummary { pub name: String, pub description: String }
pub fn profiles() -> Vec<ProfileSummary> { Vec::new() }
pub fn profile_toml(_: &str) -> Result<String, String> { Err("simulator not built yet".into()) }
pub fn open_device(_: &str, _: u64, _: usize) -> Result<Box<dyn flashlab_device::Device>, String> { Err("simulator not built yet".into()) }
