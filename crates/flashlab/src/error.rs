//! Errors as the user sees them: one line, naming the problem and the fix,
//! and an exit code (2 for a user mistake, 1 for a failure of the device or
//! the machine).

use std::fmt;

pub const EXIT_USER: u8 = 2;
pub const EXIT_FAILURE: u8 = 1;

#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub exit_code: u8,
}

impl CliError {
    /// A mistake in what the user asked for: a message or a library's typed
    /// error (whose `Display` is already one line naming the fix).
    pub fn user(message: impl fmt::Display) -> CliError {
        CliError {
            message: message.to_string(),
            exit_code: EXIT_USER,
        }
    }

    /// An IO error from writing output, or a failure: a closed pipe
    /// (`| head`) is not an error but the reader being done.
    pub fn output(context: &str, e: std::io::Error) -> CliError {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CliError {
                message: String::new(),
                exit_code: 0,
            }
        } else {
            CliError::failure(format!("{context}: {e}"))
        }
    }

    /// True when the reader of stdout went away: main exits 0 silently.
    pub fn is_broken_pipe(&self) -> bool {
        self.exit_code == 0
    }

    /// Something failed that the user's input did not cause.
    pub fn failure(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            exit_code: EXIT_FAILURE,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Keep it to one line whatever the source said, and short whatever
        // the input was: a message quoting a huge value (a megabyte-long
        // TOML string, a --device argument) keeps its start and its end,
        // where the fix is named.
        let line = self.message.replace(['\n', '\r'], " ");
        if line.len() <= MAX_MESSAGE_BYTES {
            return f.write_str(&line);
        }
        let head = floor_char_boundary(&line, MAX_MESSAGE_BYTES / 2);
        let tail = ceil_char_boundary(&line, line.len() - MAX_MESSAGE_BYTES / 2);
        write!(f, "{} ... {}", &line[..head], &line[tail..])
    }
}

/// The longest error line printed.
pub const MAX_MESSAGE_BYTES: usize = 600;

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

pub type CliResult<T> = Result<T, CliError>;
