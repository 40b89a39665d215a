//! /proc: a process tree, open file descriptors and their positions.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::PathBuf;

/// `root` and all its descendants (processes and their threads), or an
/// empty list if `root` does not exist.
pub fn tree(root: u32) -> Vec<u32> {
    if fs::metadata(format!("/proc/{root}")).is_err() {
        return Vec::new();
    }
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(entries) = fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(ppid) = parent(pid) {
                children.entry(ppid).or_default().push(pid);
            }
        }
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        if !seen.insert(pid) {
            continue;
        }
        out.push(pid);
        out.extend(threads(pid).into_iter().filter(|t| *t != pid));
        if let Some(kids) = children.get(&pid) {
            stack.extend(kids);
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn parent(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid ...`: comm may hold spaces and parentheses.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

fn threads(pid: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
        .collect()
}

/// The thread group (process) of a thread, which owns the fd table.
pub fn tgid(pid: u32) -> Option<u32> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Where `fd` of `pid` points now.
pub fn fd_path(pid: u32, fd: u64) -> Option<PathBuf> {
    fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()
}

/// Every open fd of `pid` with its path and file position.
pub fn fds(pid: u32) -> Vec<(u64, PathBuf, u64)> {
    let Ok(entries) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u64>().ok())
        else {
            continue;
        };
        let Ok(path) = fs::read_link(entry.path()) else {
            continue;
        };
        let pos = fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}"))
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("pos:"))
                    .and_then(|v| v.trim().parse().ok())
            })
            .unwrap_or(0);
        out.push((fd, path, pos));
    }
    out
}
