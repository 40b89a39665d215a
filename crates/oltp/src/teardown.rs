//! The teardown stack: every setup step that changes the machine (a loop
//! device, a mount, a child process, a scheduler setting, a directory) pushes
//! its undo here at once, and the stack is unwound in reverse order on
//! success, on error and after Ctrl-C (the stack is dropped on every path
//! out of `run`). An undo that fails is reported, and the unwinding goes on.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;

pub type Undo = Box<dyn FnOnce() -> Result<(), UndoError>>;

/// Why an undo step failed: what it leaves behind on the machine. Each
/// displays as one line, recorded in oltp.json's teardown errors after the
/// step's name.
#[derive(Debug)]
pub enum UndoError {
    /// A file or directory flashlab created could not be removed.
    Remove { path: PathBuf, source: io::Error },
    /// `umount` kept failing; `last` is its last complaint.
    Unmount { dir: PathBuf, last: String },
    /// The block device's IO scheduler could not be set back.
    RestoreScheduler(io::Error),
    /// The cluster directory no longer holds flashlab's marker, so it is
    /// not removed.
    MarkerLost { dir: PathBuf },
    /// A child process could not be waited for.
    Reap { pid: u32, source: io::Error },
    /// `flashlab serve` exited unsuccessfully.
    ServeExited(ExitStatus),
    /// The nbdfuse mount could not be unmounted.
    FuseUnmount { dir: PathBuf, nbdfuse: ExitStatus },
    /// `losetup -d` kept failing.
    Detach { dev: PathBuf },
    /// PostgreSQL ignored the fast shutdown and was stopped with an
    /// immediate one.
    PostgresImmediateShutdown,
    /// PostgreSQL ignored the immediate shutdown too and was killed.
    PostgresKilled,
}

impl fmt::Display for UndoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UndoError::Remove { path, source } => {
                write!(f, "cannot remove {}: {source}", path.display())
            }
            UndoError::Unmount { dir, last } => {
                write!(f, "umount {} kept failing: {last}", dir.display())
            }
            UndoError::RestoreScheduler(e) => write!(f, "cannot restore the scheduler: {e}"),
            UndoError::MarkerLost { dir } => {
                write!(f, "{} lost its marker; left in place", dir.display())
            }
            UndoError::Reap { pid, source } => write!(f, "cannot reap pid {pid}: {source}"),
            UndoError::ServeExited(status) => write!(f, "flashlab serve exited with {status}"),
            UndoError::FuseUnmount { dir, nbdfuse } => write!(
                f,
                "fusermount3 -u {} failed (nbdfuse {nbdfuse})",
                dir.display()
            ),
            UndoError::Detach { dev } => write!(f, "losetup -d {} kept failing", dev.display()),
            UndoError::PostgresImmediateShutdown => {
                f.write_str("fast shutdown timed out; stopped with immediate shutdown")
            }
            UndoError::PostgresKilled => f.write_str("did not stop; killed"),
        }
    }
}

impl std::error::Error for UndoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            UndoError::Remove { source, .. }
            | UndoError::Reap { source, .. }
            | UndoError::RestoreScheduler(source) => Some(source),
            _ => None,
        }
    }
}

pub struct Teardown {
    steps: Vec<(String, Undo)>,
    /// The run's record for the next run, should this one be killed
    /// before it can unwind (`stale.rs`).
    pub recorder: Option<crate::stale::Recorder>,
    /// What each undo did or why it failed, in order.
    pub log: Vec<String>,
    pub errors: Vec<String>,
    /// Print each step as it is undone.
    pub verbose: bool,
}

impl Teardown {
    pub fn new(verbose: bool) -> Teardown {
        Teardown {
            steps: Vec::new(),
            recorder: None,
            log: Vec::new(),
            errors: Vec::new(),
            verbose,
        }
    }

    /// Registers the undo of a step that just succeeded.
    pub fn push(
        &mut self,
        what: impl Into<String>,
        undo: impl FnOnce() -> Result<(), UndoError> + 'static,
    ) {
        self.steps.push((what.into(), Box::new(undo)));
    }

    /// Records a step for the next run's cleanup (nothing without a recorder).
    pub fn note(&mut self, r: crate::stale::Record) {
        if let Some(rec) = &mut self.recorder {
            rec.note(&r);
        }
    }

    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Undoes every step, newest first. Returns the errors of this unwinding.
    pub fn unwind(&mut self) -> Vec<String> {
        let mut errors = Vec::new();
        while let Some((what, undo)) = self.steps.pop() {
            if self.verbose {
                eprintln!("teardown: {what}");
            }
            match undo() {
                Ok(()) => self.log.push(format!("{what}: done")),
                Err(e) => {
                    let line = format!("{what}: {e}");
                    eprintln!("teardown: {line}");
                    self.log.push(line.clone());
                    errors.push(line);
                }
            }
        }
        self.errors.extend(errors.iter().cloned());
        errors
    }
}

impl Drop for Teardown {
    fn drop(&mut self) {
        self.unwind();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    #[test]
    fn steps_are_undone_newest_first_even_after_a_failure() {
        let order = Rc::new(RefCell::new(Vec::new()));
        let mut t = Teardown::new(false);
        for i in 0..3 {
            let o = order.clone();
            t.push(format!("step {i}"), move || {
                o.borrow_mut().push(i);
                if i == 1 {
                    Err(UndoError::Detach {
                        dev: "/dev/loop7".into(),
                    })
                } else {
                    Ok(())
                }
            });
        }
        let errors = t.unwind();
        assert_eq!(*order.borrow(), vec![2, 1, 0]);
        assert_eq!(
            errors,
            vec!["step 1: losetup -d /dev/loop7 kept failing".to_string()]
        );
        assert!(t.is_empty());
    }

    #[test]
    fn dropping_the_stack_undoes_what_is_left() {
        let done = Rc::new(RefCell::new(false));
        {
            let mut t = Teardown::new(false);
            let d = done.clone();
            t.push("mount", move || {
                *d.borrow_mut() = true;
                Ok(())
            });
        }
        assert!(*done.borrow());
    }
}
