//! The teardown stack: every setup step that changes the machine (a loop
//! device, a mount, a child process, a scheduler setting, a directory) pushes
//! its undo here at once, and the stack is unwound in reverse order on
//! success, on error and after Ctrl-C (the stack is dropped on every path
//! out of `run`). An undo that fails is reported, and the unwinding goes on.

pub type Undo = Box<dyn FnOnce() -> Result<(), String>>;

pub struct Teardown {
    steps: Vec<(String, Undo)>,
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
            log: Vec::new(),
            errors: Vec::new(),
            verbose,
        }
    }

    /// Registers the undo of a step that just succeeded.
    pub fn push(
        &mut self,
        what: impl Into<String>,
        undo: impl FnOnce() -> Result<(), String> + 'static,
    ) {
        self.steps.push((what.into(), Box::new(undo)));
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
                    Err("stuck".into())
                } else {
                    Ok(())
                }
            });
        }
        let errors = t.unwind();
        assert_eq!(*order.borrow(), vec![2, 1, 0]);
        assert_eq!(errors, vec!["step 1: stuck".to_string()]);
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
