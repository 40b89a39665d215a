//! One traced event, as both readers hand it to a sink.
//!
//! The text reader (`pipe.rs`, `trace_pipe`) and the binary reader
//! (`raw.rs`, the per-CPU `trace_pipe_raw` ring-buffer pages) decode the
//! same tracepoints into this one form, so the sinks that turn events into
//! trace lines cannot tell (and do not care) which reader fed them.

use crate::logical;
use crate::physical::{self, BlockEvent};
use crate::pipe::TextEvent;

/// An event: who, when (the trace clock, CLOCK_MONOTONIC, in ns) and what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub pid: u32,
    pub time_ns: u64,
    pub kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `sys_enter_*`: `call` indexes the logical side's syscall list; the
    /// arguments in the order of the event's fields (unused ones 0).
    SysEnter {
        call: u8,
        args: [u64; 6],
    },
    /// `sys_exit_*` with the call's return value.
    SysExit {
        call: u8,
        ret: i64,
    },
    Fork {
        parent_pid: u32,
        child_pid: u32,
    },
    Exec {
        pid: u32,
    },
    ProcessExit {
        pid: u32,
    },
    /// A file system's fsync event (`ext4_sync_file_enter`,
    /// `xfs_file_fsync`, `btrfs_sync_file`): the inode being synced (`dev`
    /// as the kernel encodes it, major << 20 | minor; 0 from btrfs, which
    /// names its file system by UUID).
    SyncInode {
        dev: u32,
        ino: u64,
    },
    BlockIssue(BlockEvent),
    BlockComplete(BlockEvent),
    /// An event the reader could not decode (the sinks count it as an
    /// unparsed line).
    Unknown,
}

/// Decodes a text line's event (already split by `pipe::parse_event`).
pub fn from_text(ev: &TextEvent<'_>) -> Event {
    Event {
        pid: ev.pid,
        time_ns: ev.time_ns,
        kind: text_kind(ev.name, ev.body),
    }
}

fn text_kind(name: &str, body: &str) -> Kind {
    if let Some(call) = name.strip_prefix("sys_") {
        let Some(call) = logical::syscall_index(call) else {
            return Kind::Unknown;
        };
        if let Some(ret) = body.strip_prefix("->") {
            return match logical::number(ret) {
                Some(ret) => Kind::SysExit {
                    call,
                    ret: ret as i64,
                },
                None => Kind::Unknown,
            };
        }
        return match logical::args(body) {
            Some(args) => Kind::SysEnter { call, args },
            None => Kind::Unknown,
        };
    }
    let field = |key: &str| {
        body.split_whitespace()
            .find_map(|kv| kv.strip_prefix(key))
            .and_then(|v| v.parse::<u32>().ok())
    };
    match name {
        "block_rq_issue" => {
            physical::parse_block(body, true).map_or(Kind::Unknown, Kind::BlockIssue)
        }
        "block_rq_complete" => {
            physical::parse_block(body, false).map_or(Kind::Unknown, Kind::BlockComplete)
        }
        "sched_process_fork" => match (field("pid="), field("child_pid=")) {
            (Some(parent_pid), Some(child_pid)) => Kind::Fork {
                parent_pid,
                child_pid,
            },
            _ => Kind::Unknown,
        },
        "sched_process_exec" => field("pid=").map_or(Kind::Unknown, |pid| Kind::Exec { pid }),
        "sched_process_exit" => {
            field("pid=").map_or(Kind::Unknown, |pid| Kind::ProcessExit { pid })
        }
        // "dev 7,0 ino 12 parent 2 datasync 1 " (ext4), "dev 7:0 ino 0x1a
        // iflags 0x0" (xfs): the value follows its key word.
        "ext4_sync_file_enter" | "xfs_file_fsync" => {
            let words: Vec<&str> = body.split_whitespace().collect();
            let after = |key: &str| {
                words
                    .iter()
                    .position(|w| *w == key)
                    .and_then(|i| words.get(i + 1))
            };
            let dev = after("dev").and_then(|d| {
                let (major, minor) = d.split_once([',', ':'])?;
                Some((major.parse::<u32>().ok()? << 20) | minor.parse::<u32>().ok()?)
            });
            match (dev, after("ino").and_then(|i| logical::number(i))) {
                (Some(dev), Some(ino)) => Kind::SyncInode { dev, ino },
                _ => Kind::Unknown,
            }
        }
        "btrfs_sync_file" => body
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix("ino="))
            .and_then(|v| v.parse().ok())
            .map_or(Kind::Unknown, |ino| Kind::SyncInode { dev: 0, ino }),
        _ => Kind::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipe::parse_event;

    fn kind(line: &str) -> Kind {
        from_text(&parse_event(line).expect("an event line")).kind
    }

    #[test]
    fn text_lines_decode_into_typed_events() {
        let pwrite = logical::syscall_index("pwrite64").unwrap();
        assert_eq!(
            kind("postgres-9095 [001] ..... 10977.937801: sys_pwrite64(fd: 3, buf: 0x55bc45c5bcc0, count: 0x2000, pos: 0x1000)"),
            Kind::SysEnter {
                call: pwrite,
                args: [3, 0x55bc45c5bcc0, 0x2000, 0x1000, 0, 0]
            }
        );
        assert_eq!(
            kind("postgres-9095 [001] ..... 10977.937809: sys_pwrite64 -> 0xfffffffffffffff2"),
            Kind::SysExit {
                call: pwrite,
                ret: -14
            }
        );
        assert_eq!(
            kind("postgres-10 [000] ..... 5.000001: sched_process_fork: comm=postgres pid=10 child_comm=postgres child_pid=11"),
            Kind::Fork {
                parent_pid: 10,
                child_pid: 11
            }
        );
        assert_eq!(
            kind("sh-12 [000] ..... 5.000001: sched_process_exec: filename=/bin/ls pid=12 old_pid=12"),
            Kind::Exec { pid: 12 }
        );
        assert_eq!(
            kind("ls-12 [000] ..... 5.000001: sched_process_exit: comm=ls pid=12 prio=120 group_dead=true"),
            Kind::ProcessExit { pid: 12 }
        );
        assert_eq!(
            kind("postgres-77 [001] ..... 12.5: ext4_sync_file_enter: dev 7,3 ino 4001 parent 2 datasync 1 "),
            Kind::SyncInode {
                dev: (7 << 20) | 3,
                ino: 4001
            }
        );
        assert_eq!(
            kind("postgres-77 [001] ..... 12.5: xfs_file_fsync: dev 7:3 ino 0x4001 iflags 0x0"),
            Kind::SyncInode {
                dev: (7 << 20) | 3,
                ino: 0x4001
            }
        );
        assert_eq!(
            kind("postgres-77 [001] ..... 12.5: btrfs_sync_file: 0d4f-aa: root=5(FS_TREE) ino=257 parent=256 datasync=0"),
            Kind::SyncInode { dev: 0, ino: 257 }
        );
        assert!(matches!(
            kind("kworker-44 [001] ..... 10942.412517: block_rq_issue: 7,0 WS 4096 () 8 + 8 be,0,4 [kworker]"),
            Kind::BlockIssue(b) if b.sector == 8 && b.bytes == Some(4096)
        ));
        assert_eq!(
            kind("x-1 [000] ..... 1.0: sys_mmap(addr: 0)"),
            Kind::Unknown
        );
    }
}
