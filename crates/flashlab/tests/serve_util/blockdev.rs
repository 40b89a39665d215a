//! Block-device plumbing for the root tests: an NBD export as a file
//! (nbdfuse), a loop device over it, a mounted file system; each torn down
//! on drop, lazily if need be.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn sh(cmd: &str, args: &[&str]) -> String {
    let o = Command::new(cmd).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "{cmd} {args:?} failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// nbdfuse exposing the export as one file; unmounted (lazily if need be) on drop.
pub struct Fuse {
    child: Option<Child>,
    dir: PathBuf,
}

impl Fuse {
    pub fn attach(sock: &Path, dir: &Path) -> Fuse {
        std::fs::create_dir_all(dir).unwrap();
        let child = Command::new("nbdfuse")
            .arg(dir.join("disk"))
            .arg("--unix")
            .arg(sock)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let f = Fuse {
            child: Some(child),
            dir: dir.to_path_buf(),
        };
        let t0 = Instant::now();
        while std::fs::metadata(f.file()).map_or(true, |m| m.len() == 0) {
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "nbdfuse did not come up"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        f
    }

    pub fn file(&self) -> PathBuf {
        self.dir.join("disk")
    }
}

impl Drop for Fuse {
    fn drop(&mut self) {
        let d = self.dir.to_str().unwrap();
        let ok = Command::new("fusermount3")
            .args(["-u", d])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("fusermount3")
                .args(["-u", "-z", d])
                .stderr(Stdio::null())
                .status();
            let _ = Command::new("umount")
                .args(["-l", d])
                .stderr(Stdio::null())
                .status();
        }
        if let Some(mut c) = self.child.take() {
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(5) {
                if c.try_wait().ok().flatten().is_some() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A loop device over the nbdfuse file, detached on drop.
pub struct Loop(pub String);

impl Loop {
    pub fn attach(file: &Path) -> Loop {
        Loop(
            sh(
                "losetup",
                &["-f", "--show", "--direct-io=on", file.to_str().unwrap()],
            )
            .trim()
            .to_string(),
        )
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup")
            .args(["-d", &self.0])
            .stderr(Stdio::null())
            .status();
    }
}

/// A mounted file system, unmounted (lazily if need be) on drop.
pub struct Mount(PathBuf);

impl Mount {
    pub fn at(dev: &str, dir: &Path) -> Mount {
        std::fs::create_dir_all(dir).unwrap();
        sh("mount", &[dev, dir.to_str().unwrap()]);
        Mount(dir.to_path_buf())
    }
    pub fn unmount(self) {
        sh("umount", &[self.0.to_str().unwrap()]);
        std::mem::forget(self);
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let d = self.0.to_str().unwrap();
        if !Command::new("umount")
            .arg(d)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
        {
            let _ = Command::new("umount").args(["-l", d]).status();
        }
    }
}
