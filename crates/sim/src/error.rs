//! The simulator's errors, one enum per kind of failure.
//!
//! Every `Display` is one line naming the problem and, where the user can act,
//! the fix (the CLI prints them as they are and its tests check the wording).
//! A [`SimError`] that escapes a request latches the device; the `Device`
//! interface reports it as `DeviceError::Invariant` with the same text.

use std::fmt;

/// Anything the simulator can fail with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// A device spec, profile or override cannot be used.
    Config(ConfigError),
    /// The simulated device cannot make progress (no free block, garbage
    /// collection without progress, a request past `check.stall_ns`). The
    /// text says what ran out; `Display` prefixes it with `stall: `.
    Stall(String),
    /// A checkpoint cannot be made or restored.
    Checkpoint(CheckpointError),
    /// An internal consistency check failed: a simulator bug, never user input.
    Invariant(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config(e) => e.fmt(f),
            SimError::Stall(what) => write!(f, "stall: {what}"),
            SimError::Checkpoint(e) => e.fmt(f),
            SimError::Invariant(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for SimError {}

impl From<ConfigError> for SimError {
    fn from(e: ConfigError) -> SimError {
        SimError::Config(e)
    }
}

impl From<CheckpointError> for SimError {
    fn from(e: CheckpointError) -> SimError {
        SimError::Checkpoint(e)
    }
}

impl SimError {
    /// An internal consistency failure, prefixed with where it was found.
    pub(crate) fn context(self, what: impl fmt::Display) -> SimError {
        SimError::Invariant(format!("{what}: {self}"))
    }
}

/// Why a device spec, profile or override cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// `sim:` with nothing after it.
    EmptySpec,
    /// Neither a built-in profile nor a path.
    UnknownProfile {
        name: String,
        /// The built-in profile the name is a typo of, if any.
        suggestion: Option<String>,
    },
    /// `,key` without `=value`.
    OverrideWithoutValue { text: String },
    /// The profile file cannot be opened or read.
    UnreadableProfile { path: String, reason: String },
    /// The profile file is over the 1 MiB limit.
    ProfileTooLarge { path: String },
    /// The profile file is not UTF-8.
    ProfileNotUtf8 { path: String },
    /// The profile is not valid TOML for a simulator configuration.
    ProfileSyntax { origin: String, message: String },
    /// `cache=VALUE` is neither on/off nor a size.
    CacheOverride { value: String, reason: String },
    /// The configuration cannot be turned into a TOML document to patch.
    OverrideUnserialisable { key: String, reason: String },
    /// An override names no known setting.
    UnknownSetting { key: String },
    /// An override's value does not fit its setting.
    OverrideValue {
        key: String,
        value: String,
        message: String,
    },
    /// The configuration parses but is not a device the simulator can model.
    Invalid { profile: String, problem: String },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::EmptySpec => f.write_str(
                "empty simulator spec; write sim:PROFILE such as sim:ssd-m (`flashlab sim profiles` lists them)",
            ),
            ConfigError::UnknownProfile { name, suggestion } => write!(
                f,
                "unknown simulator profile '{name}'; {}`flashlab sim profiles` lists them (or give a path to a .toml profile)",
                suggestion
                    .as_ref()
                    .map_or(String::new(), |s| format!("did you mean '{s}'? "))
            ),
            ConfigError::OverrideWithoutValue { text } => write!(
                f,
                "simulator override '{text}' has no value; write key=value, e.g. capacity=4GiB"
            ),
            ConfigError::UnreadableProfile { path, reason } => write!(
                f,
                "cannot read simulator profile {path}: {reason}; check the path"
            ),
            ConfigError::ProfileTooLarge { path } => write!(
                f,
                "simulator profile {path} is larger than 1 MiB; pass a TOML profile (`flashlab sim show ssd-m` prints one)"
            ),
            ConfigError::ProfileNotUtf8 { path } => write!(
                f,
                "simulator profile {path} is not UTF-8 text; pass a TOML profile"
            ),
            ConfigError::ProfileSyntax { origin, message } => write!(
                f,
                "simulator profile {origin}: {message}; `flashlab sim profile ssd-m` prints a valid one to start from"
            ),
            ConfigError::CacheOverride { value, reason } => write!(
                f,
                "override cache={value}: {reason}; use cache=on, cache=off or cache=SIZE"
            ),
            ConfigError::OverrideUnserialisable { key, reason } => {
                write!(f, "cannot apply override {key}: {reason}")
            }
            ConfigError::UnknownSetting { key } => write!(
                f,
                "unknown simulator setting '{key}'; use a dotted path such as gc.policy or an alias such as capacity, op, cache, check"
            ),
            ConfigError::OverrideValue {
                key,
                value,
                message,
            } => write!(
                f,
                "override {key}={value}: {message}; see `flashlab sim profile NAME` for valid settings"
            ),
            ConfigError::Invalid { profile, problem } => {
                write!(f, "profile '{profile}': {problem}")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// The configuration of `profile` is not modellable; `problem` names the setting and the fix.
    pub(crate) fn invalid(profile: &str, problem: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            profile: profile.to_string(),
            problem: problem.into(),
        }
    }
}

/// Why a checkpoint cannot be made or restored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckpointError {
    /// The bytes end before a field does.
    Truncated,
    /// A length prefix runs past the end of the bytes.
    LengthPastEnd,
    /// A table has the wrong number of entries for this device.
    Count {
        what: String,
        found: usize,
        expected: usize,
    },
    /// Not a simulator checkpoint.
    BadMagic,
    /// The checksum does not match: the bytes were damaged.
    ChecksumMismatch,
    /// Written by another format version.
    Version { found: u32, supported: u32 },
    /// Made by a device with another profile, geometry or seed.
    DifferentDevice { identity: String },
    /// Bytes left after the last field.
    TrailingBytes,
    /// A field's value is impossible for this device (`what` names it).
    Malformed(&'static str),
    /// A table's value is impossible for this device (`what` names it and the value).
    MalformedValue(String),
    /// The restored state fails the consistency checker.
    Inconsistent(Box<SimError>),
    /// Checkpoints need a quiesced device.
    Outstanding,
    /// This FTL does not implement checkpoints.
    Unsupported { ftl: String },
    /// The device had already failed; the latched error as it was reported.
    Failed(String),
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::Truncated => f.write_str("checkpoint truncated"),
            CheckpointError::LengthPastEnd => {
                f.write_str("checkpoint truncated (a length runs past the end)")
            }
            CheckpointError::Count {
                what,
                found,
                expected,
            } => write!(f, "checkpoint {what}: {found} entries, expected {expected}"),
            CheckpointError::BadMagic => {
                f.write_str("not a flashlab simulator checkpoint (bad magic)")
            }
            CheckpointError::ChecksumMismatch => {
                f.write_str("simulator checkpoint damaged (checksum mismatch)")
            }
            CheckpointError::Version { found, supported } => write!(
                f,
                "simulator checkpoint version {found}, this flashlab reads {supported}"
            ),
            CheckpointError::DifferentDevice { identity } => write!(
                f,
                "the checkpoint was made by a different device (profile, geometry or seed differ): {identity}"
            ),
            CheckpointError::TrailingBytes => f.write_str("simulator checkpoint has trailing bytes"),
            CheckpointError::Malformed(what) => f.write_str(what),
            CheckpointError::MalformedValue(what) => f.write_str(what),
            CheckpointError::Inconsistent(e) => {
                write!(f, "restored simulator state is inconsistent: {e}")
            }
            CheckpointError::Outstanding => {
                f.write_str("cannot checkpoint with requests outstanding")
            }
            CheckpointError::Unsupported { ftl } => {
                write!(f, "the {ftl} FTL cannot be checkpointed")
            }
            CheckpointError::Failed(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for CheckpointError {}

/// Result alias for the simulator.
pub type SimResult<T> = Result<T, SimError>;
