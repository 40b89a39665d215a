//! `--device sim:PROFILE`: the simulator in device mode, as docs/serve.md
//! describes: `flashlab serve` as a child on a private data directory (with
//! its own `--trace` and `--stats-json`), the export as one file through
//! `nbdfuse`, and a loop device over that file. Teardown detaches the loop
//! device, unmounts the FUSE file (nbdfuse exits) and stops serve with
//! SIGTERM (it writes a checkpoint), then removes the private directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{attach_loop_fd, Attached};
use crate::error::{Failure, InputError, OltpError, Result};
use crate::proc;
use crate::teardown::{Teardown, UndoError};

/// A running `flashlab serve`, for statistics snapshots.
#[derive(Clone, Debug)]
pub struct ServeHandle {
    pub pid: u32,
    pub stats_json: PathBuf,
}

impl ServeHandle {
    /// Asks serve for its statistics (SIGUSR1) and waits for the fresh
    /// snapshot it writes to `--stats-json`.
    pub fn snapshot(&self) -> Option<serde_json::Value> {
        let before = read_seq(&self.stats_json);
        // SAFETY: kill(2) on the serve child we started and have not reaped.
        unsafe {
            libc::kill(self.pid as libc::pid_t, libc::SIGUSR1);
        }
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            if let Some(v) = read_json(&self.stats_json) {
                if v.get("seq").and_then(|s| s.as_u64()) > before {
                    return Some(v);
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

fn read_json(p: &Path) -> Option<serde_json::Value> {
    serde_json::from_slice(&std::fs::read(p).ok()?).ok()
}

fn read_seq(p: &Path) -> Option<u64> {
    read_json(p)?.get("seq")?.as_u64()
}

/// What the sim backend needs.
pub struct SimSetup<'a> {
    pub spec: &'a str,
    /// Capacity to give the simulated device when the spec sets none.
    pub default_capacity_bytes: u64,
    /// The flashlab executable (for `flashlab serve`).
    pub exe: &'a Path,
    /// Private directory for serve's data and the nbdfuse mount point.
    pub run_dir: &'a Path,
    /// The device trace (every NBD request) and the statistics file.
    pub trace: &'a Path,
    pub stats_json: &'a Path,
    pub serve_log: &'a Path,
    pub seed: u64,
    /// `flashlab serve --pace`: PostgreSQL feels the simulated timing.
    pub pace: bool,
}

/// The spec with a capacity: a profile's own capacity (64 GB for the X25-E)
/// would make serve's checkpoints and the map large for no benefit at
/// TPC-C's small scales.
pub fn spec_with_capacity(spec: &str, capacity_bytes: u64) -> String {
    let has = spec
        .split(',')
        .skip(1)
        .any(|kv| kv.trim_start().starts_with("capacity="));
    if has {
        spec.to_string()
    } else {
        format!("{spec},capacity={}MiB", capacity_bytes.div_ceil(1 << 20))
    }
}

/// Long: starts `flashlab serve`, nbdfuse and the loop device in order, each step undoing the
/// earlier ones when it fails.
pub fn attach(s: &SimSetup, teardown: &mut Teardown) -> Result<Attached> {
    let nbdfuse = proc::find_tool(
        "nbdfuse",
        "libnbd-bin",
        "to reach the simulated SSD's NBD export as a file",
    )?;
    let fusermount = proc::find_tool("fusermount3", "fuse3", "to unmount the nbdfuse file")?;
    let spec = spec_with_capacity(s.spec, s.default_capacity_bytes);
    flashlab_sim::resolve_spec(&spec).map_err(|source| {
        OltpError::Input(InputError::SimSpec {
            spec: s.spec.to_string(),
            source,
        })
    })?;
    let data = s.run_dir.join("serve");
    let sock = data.join("nbd.sock");
    let log = std::fs::File::create(s.serve_log)
        .map_err(|e| OltpError::failed(format!("cannot create {}", s.serve_log.display()), e))?;
    let mut cmd = Command::new(s.exe);
    cmd.arg("serve")
        .arg("--profile")
        .arg(&spec)
        .arg("--data")
        .arg(&data)
        .arg("--trace")
        .arg(s.trace)
        .arg("--stats-json")
        .arg(s.stats_json)
        .arg("--seed")
        .arg(s.seed.to_string())
        .args(s.pace.then_some("--pace"))
        .stdin(Stdio::null())
        .stdout(
            log.try_clone()
                .map_err(|e| OltpError::failed("cannot dup the serve log", e))?,
        )
        .stderr(log);
    // Its own process group: the terminal's Ctrl-C reaches flashlab only,
    // which then unmounts the file system before it stops the device.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let child = cmd
        .spawn()
        .map_err(|e| OltpError::failed(format!("cannot start {} serve", s.exe.display()), e))?;
    let pid = child.id();
    teardown.note(crate::stale::Record::Process {
        what: "flashlab serve".into(),
        pid,
        start_ticks: crate::stale::start_ticks(pid).unwrap_or(0),
        signal: libc::SIGTERM,
    });
    let child = std::rc::Rc::new(std::cell::RefCell::new(child));
    {
        let child = child.clone();
        let data = data.clone();
        teardown.push(format!("stop flashlab serve (pid {pid})"), move || {
            let status = proc::stop_child(
                &mut child.borrow_mut(),
                libc::SIGTERM,
                Duration::from_secs(120),
            )?;
            let _ = std::fs::remove_dir_all(&data);
            if status.success() {
                Ok(())
            } else {
                Err(UndoError::ServeExited(status))
            }
        });
    }
    // Wait for the socket (serve creates the device first).
    let end = Instant::now() + Duration::from_secs(120);
    while !sock.exists() {
        if let Ok(Some(st)) = child.borrow_mut().try_wait() {
            return Err(OltpError::Failed(Failure::Exited {
                what: "flashlab serve",
                status: st,
                last_line: proc::last_log_line(s.serve_log),
            }));
        }
        if Instant::now() > end {
            return Err(OltpError::Failed(Failure::NotReady {
                what: "flashlab serve did not listen".into(),
                within_s: 120,
                last_log_line: None,
            }));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // nbdfuse: the export as the one file MOUNTPOINT/disk.
    let mnt = s.run_dir.join("nbd");
    std::fs::create_dir_all(&mnt)
        .map_err(|e| OltpError::failed(format!("cannot create {}", mnt.display()), e))?;
    let disk = mnt.join("disk");
    let mut cmd = Command::new(&nbdfuse);
    cmd.arg(&disk)
        .arg("--unix")
        .arg(&sock)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let fuse = cmd
        .spawn()
        .map_err(|e| OltpError::failed("cannot start nbdfuse", e))?;
    let fuse_pid = fuse.id();
    teardown.note(crate::stale::Record::Process {
        what: "nbdfuse".into(),
        pid: fuse_pid,
        start_ticks: crate::stale::start_ticks(fuse_pid).unwrap_or(0),
        signal: libc::SIGTERM,
    });
    teardown.note(crate::stale::Record::FuseMount {
        dir: std::fs::canonicalize(&mnt).unwrap_or_else(|_| mnt.clone()),
    });
    let fuse = std::rc::Rc::new(std::cell::RefCell::new(fuse));
    {
        let fuse = fuse.clone();
        let mnt = mnt.clone();
        teardown.push(
            format!("unmount the nbdfuse file (pid {fuse_pid})"),
            move || {
                let mut unmounted = false;
                for _ in 0..50 {
                    let ok = Command::new(&fusermount)
                        .arg("-u")
                        .arg(&mnt)
                        .stderr(Stdio::null())
                        .status()
                        .is_ok_and(|s| s.success());
                    if ok || !is_mount_point(&mnt) {
                        unmounted = true;
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                let st = proc::stop_child(
                    &mut fuse.borrow_mut(),
                    libc::SIGTERM,
                    Duration::from_secs(10),
                )?;
                let _ = std::fs::remove_dir(&mnt);
                if unmounted {
                    Ok(())
                } else {
                    Err(UndoError::FuseUnmount {
                        dir: mnt,
                        nbdfuse: st,
                    })
                }
            },
        );
    }
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        if std::fs::metadata(&disk).is_ok_and(|m| m.len() > 0) {
            break;
        }
        if let Ok(Some(st)) = fuse.borrow_mut().try_wait() {
            let mut err = String::new();
            if let Some(mut e) = fuse.borrow_mut().stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            return Err(OltpError::Failed(Failure::Exited {
                what: "nbdfuse",
                status: st,
                last_line: proc::last_line(&err).unwrap_or_default(),
            }));
        }
        if Instant::now() > end {
            return Err(OltpError::Failed(Failure::NotReady {
                what: format!("nbdfuse did not present {}", disk.display()),
                within_s: 30,
                last_log_line: None,
            }));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // The loop device goes over the file nbdfuse presents, opened once
    // (O_NOFOLLOW) and checked to live on the FUSE mount flashlab made.
    let f = open_fuse_file(&disk, &mnt)?;
    let mut a = attach_loop_fd(std::os::fd::AsFd::as_fd(&f), &disk, teardown)?;
    drop(f);
    a.serve = Some(ServeHandle {
        pid,
        stats_json: s.stats_json.to_path_buf(),
    });
    Ok(a)
}

/// The nbdfuse file, opened without following a symlink, and only when it
/// is a regular file on the FUSE mount at `mnt` (the same st_dev as the
/// mount point, whose mount is a fuse one).
fn open_fuse_file(disk: &Path, mnt: &Path) -> Result<std::fs::File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(disk)
        .map_err(|e| OltpError::failed(format!("cannot open {}", disk.display()), e))?;
    let m = f
        .metadata()
        .map_err(|e| OltpError::failed(format!("cannot stat {}", disk.display()), e))?;
    let on_fuse = crate::device::mount::mounts().iter().any(|e| {
        e.fstype.starts_with("fuse")
            && libc::makedev(e.major, e.minor) == m.dev()
            && std::fs::canonicalize(mnt).is_ok_and(|c| c == e.mount_point)
    });
    if !m.is_file() || !on_fuse {
        return Err(OltpError::NotOurs(format!(
            "{} is not the file nbdfuse presents on {}; nothing was attached",
            disk.display(),
            mnt.display()
        )));
    }
    Ok(f)
}

/// Whether `dir` is a mount point (in our mount namespace).
pub fn is_mount_point(dir: &Path) -> bool {
    let Ok(canon) = std::fs::canonicalize(dir) else {
        return false;
    };
    crate::device::mount::mounts()
        .iter()
        .any(|m| m.mount_point == canon)
}
