//! The error of opening, probing or safety-checking a target.
//!
//! Its `Display` is one line naming the problem and the fix, ready for the CLI
//! to print as is; its [`OpenErrorKind`] tells the CLI whether the user can fix
//! it (exit code 2) or something failed at run time (exit code 1).

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenErrorKind {
    /// The path does not exist and nothing says to create it.
    NotFound,
    /// The safety check refused to write to a block device.
    Refused,
    /// The request makes no sense for this target (too small, not a file or
    /// block device, bad options).
    InvalidInput,
    /// The target or the kernel cannot do what was asked (no O_DIRECT, no io_uring).
    Unsupported,
    /// An OS call failed unexpectedly.
    Io,
}

impl OpenErrorKind {
    /// Whether the user can fix it by changing the command line.
    pub fn is_user_error(self) -> bool {
        !matches!(self, OpenErrorKind::Io)
    }

    /// The CLI's convention: 2 for user errors, 1 for runtime failures.
    pub fn exit_code(self) -> i32 {
        if self.is_user_error() {
            2
        } else {
            1
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenError {
    kind: OpenErrorKind,
    message: String,
}

impl OpenError {
    pub fn new(kind: OpenErrorKind, message: impl Into<String>) -> OpenError {
        let mut message = message.into();
        // One line, always: the CLI prints it as is.
        if message.contains('\n') {
            message = message.replace('\n', " ");
        }
        OpenError { kind, message }
    }

    pub fn kind(&self) -> OpenErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn io(what: impl fmt::Display, err: &std::io::Error) -> OpenError {
        OpenError::new(OpenErrorKind::Io, format!("{what}: {err}"))
    }

    pub(crate) fn invalid(message: impl Into<String>) -> OpenError {
        OpenError::new(OpenErrorKind::InvalidInput, message)
    }

    pub(crate) fn unsupported(message: impl Into<String>) -> OpenError {
        OpenError::new(OpenErrorKind::Unsupported, message)
    }
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OpenError {}
