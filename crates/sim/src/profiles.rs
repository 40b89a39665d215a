//! Built-in profiles: TOML files under `crates/sim/profiles/`, compiled in.
//! Each documents its sources and the published behaviour it should show.

use crate::config::SimConfig;

/// (name, TOML text) of every built-in profile.
pub const BUILTIN: &[(&str, &str)] = &[
    ("ssd-l", include_str!("../profiles/ssd-l.toml")),
    ("ssd-m", include_str!("../profiles/ssd-m.toml")),
    ("ssd-h", include_str!("../profiles/ssd-h.toml")),
    ("nvme-tlc", include_str!("../profiles/nvme-tlc.toml")),
    ("mqsim-ref", include_str!("../profiles/mqsim-ref.toml")),
    (
        "budilovsky11",
        include_str!("../profiles/budilovsky11.toml"),
    ),
    ("memoright", include_str!("../profiles/memoright.toml")),
    (
        "hs-mtron-7525",
        include_str!("../profiles/hs-mtron-7525.toml"),
    ),
    (
        "hs-intel-x25m-g2",
        include_str!("../profiles/hs-intel-x25m-g2.toml"),
    ),
    (
        "hs-crucial-realssd",
        include_str!("../profiles/hs-crucial-realssd.toml"),
    ),
    ("mtron", include_str!("../profiles/mtron.toml")),
    ("samsung", include_str!("../profiles/samsung.toml")),
    (
        "transcend-module",
        include_str!("../profiles/transcend-module.toml"),
    ),
    (
        "transcend-mlc",
        include_str!("../profiles/transcend-mlc.toml"),
    ),
    (
        "kingston-dthx",
        include_str!("../profiles/kingston-dthx.toml"),
    ),
    (
        "kingston-dti",
        include_str!("../profiles/kingston-dti.toml"),
    ),
    (
        "mtron-pro7500",
        include_str!("../profiles/mtron-pro7500.toml"),
    ),
    ("intel-x25e", include_str!("../profiles/intel-x25e.toml")),
    (
        "ocz-vertex-ex",
        include_str!("../profiles/ocz-vertex-ex.toml"),
    ),
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
