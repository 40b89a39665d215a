//! Built-in profiles: TOML files under `crates/sim/profiles/`, compiled in.
//! Each documents its sources and the published behaviour it should show.

use crate::config::SimConfig;

/// (name, TOML text) of every built-in profile.
pub const BUILTIN: &[(&str, &str)] = &[
    ("ssd-l", include_str!("../profiles/ssd-l.toml")),
    ("ssd-m", include_str!("../profiles/ssd-m.toml")),
    ("ssd-h", include_str!("../profiles/ssd-h.toml")),
    ("nvme-tlc", include_str!("../profiles/nvme-tlc.toml")),
    ("budilovsky11", include_str!("../profiles/budilovsky11.toml")),
];

/// A built-in profile, parsed.
pub fn builtin(name: &str) -> Option<SimConfig> {
    let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
    match SimConfig::from_toml(text, name) {
        Ok(c) => Some(c),
        Err(e) => panic!("built-in profile {name} does not parse: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_validate() {
        for (name, _) in BUILTIN {
            let c = builtin(name).unwrap();
            assert_eq!(&c.name, name);
            c.validate().unwrap();
            // round trip through TOML
            let again = SimConfig::from_toml(&c.to_toml(), name).unwrap();
            assert_eq!(again, c);
        }
    }
}
