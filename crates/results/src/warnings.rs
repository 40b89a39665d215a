//! Warnings a run's own figures carry: things that make its numbers describe
//! something other than what the user meant to measure.
//!
//! Two so far: a target that cannot show flash behaviour (RAM-backed, or
//! read through a page cache; [`target_warning`], from the device's
//! identity), and reads of never-written pages on the simulator. A fresh
//! simulated SSD answers them from the controller, without touching flash
//! (real controllers do the same), so a read benchmark on it measures the
//! controller and the host link, not flash. The fraction is computed from the
//! simulator's own counters in `device_stats` (`unmapped_reads`, `host.reads`,
//! `host.read_bytes`, `page_bytes`), here rather than in the simulator, so
//! that its statistics (and `bench/sim_identical.sh`'s digests) keep their
//! shape, and every writer of `run.json` (run, replay, suites, sweeps) gets it.

use serde_json::Value;

/// Above this fraction of page reads answered without flash, a run warns.
pub const UNMAPPED_READ_WARN_FRACTION: f64 = 0.01;

/// The fraction of the run's page reads that hit a never-written (or trimmed)
/// page, from the simulator's accounting; `None` for a device that does not
/// count them or a run without reads.
///
/// The simulator counts unmapped reads per page, and host reads per request
/// and byte; the pages read are at least one per request and at least the
/// bytes over the page size, and exactly that for page-aligned requests (the
/// usual case). For requests that straddle pages the denominator is low by
/// the straddles, so the fraction is clamped to 1.
pub fn unmapped_read_fraction(device_stats: &Value) -> Option<f64> {
    let unmapped = device_stats.get("unmapped_reads")?.as_u64()?;
    let host = device_stats.get("host")?;
    let reads = host.get("reads")?.as_u64()?;
    let read_bytes = host.get("read_bytes")?.as_u64()?;
    let page_bytes = device_stats.get("page_bytes")?.as_u64()?.max(1);
    let pages = reads.max(read_bytes.div_ceil(page_bytes));
    if pages == 0 {
        return None;
    }
    Some((unmapped as f64 / pages as f64).min(1.0))
}

/// The warnings a run's device statistics call for, each one line that says
/// what is wrong and how to fix it.
pub fn device_warnings(device_stats: Option<&Value>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(f) = device_stats.and_then(unmapped_read_fraction) {
        if f > UNMAPPED_READ_WARN_FRACTION {
            let from_flash = device_stats
                .and_then(|s| s.get("unmapped_reads_read_flash"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            out.push(if from_flash {
                unmapped_flash_read_warning(f)
            } else {
                unmapped_read_warning(f)
            });
        }
    }
    out
}

/// Why the target's figures cannot describe flash, from the identity the
/// real-device engine recorded (`fs_type`, `device_name`, a loop device's
/// `loop_backing_fs_type` and `loop_dio`, a file's `backing_device_name`);
/// `None` when nothing says so (the simulator records none of these keys).
pub fn target_warning(identity: &std::collections::BTreeMap<String, String>) -> Option<String> {
    not_flash_reason(identity).map(|why| {
        format!(
            "{why}: the figures describe memory, not flash; use a real flash device \
             (or for a loop device over a file on flash: losetup --direct-io=on)"
        )
    })
}

/// Why a target cannot show flash behaviour, from its identity (the reason
/// alone: [`target_warning`] words it for a run, `flashlab twin` refuses
/// with it).
pub fn not_flash_reason(identity: &std::collections::BTreeMap<String, String>) -> Option<String> {
    let get = |k: &str| identity.get(k).map(String::as_str);
    let ram_fs = |t: &str| matches!(t, "tmpfs" | "ramfs");
    let ram_disk = |n: &str| n.starts_with("ram") || n.starts_with("zram") || n.starts_with("pmem");
    let why = if let Some(t) = get("fs_type").filter(|t| ram_fs(t)) {
        format!("the file is on {t}, a RAM-backed file system")
    } else if let Some(n) = get("device_name")
        .or(get("backing_device_name"))
        .filter(|n| ram_disk(n))
    {
        format!("{n} is a RAM disk")
    } else if let Some(t) = get("loop_backing_fs_type").filter(|t| ram_fs(t)) {
        format!(
            "the loop device's backing file {} is on {t}, a RAM-backed file system",
            get("loop_backing_file").unwrap_or("?")
        )
    } else if get("loop_backing_file").is_some() && get("loop_dio") == Some("0") {
        format!(
            "the loop device reads and writes its backing file {} through the page cache (direct IO off)",
            get("loop_backing_file").unwrap_or("?")
        )
    } else {
        return None;
    };
    Some(why)
}

/// The warning for a run whose reads hit never-written pages.
pub fn unmapped_read_warning(fraction: f64) -> String {
    format!(
        "{:.1} % of reads hit never-written pages, answered by the controller without flash: \
         the read figures do not describe flash; write the device first \
         (--device sim:PROFILE,prefill=on, or a suite's state enforcement, --state)",
        fraction * 100.0
    )
}

/// The warning for a run whose reads hit never-written pages that the
/// profile reads from flash (`sched.unmapped_read = "flash"`, MQSim's
/// charge): their times are flash reads, but of a device that holds no data.
pub fn unmapped_flash_read_warning(fraction: f64) -> String {
    format!(
        "{:.1} % of reads hit never-written pages, which this profile reads from flash as MQSim \
         charges them (sched.unmapped_read = \"flash\"): the figures are those of a device that \
         holds no data; write the device first \
         (--device sim:PROFILE,prefill=on, or a suite's state enforcement, --state)",
        fraction * 100.0
    )
}

/// The start of [`not_converged`]'s warning, by which `show` marks the run.
pub const NOT_CONVERGED: &str = "did not converge";

/// The warning of an adaptive run that reached its IOCount cap before the
/// 95 % confidence interval of its mean was within the bound: its mean is
/// less certain than asked. `achieved` is the interval's half-width
/// relative to the mean, if enough batches were measured to have one.
pub fn not_converged(io_count: u64, achieved: Option<f64>, bound: f64) -> String {
    let reached = match achieved {
        Some(r) => format!("+/- {:.1} %", r * 100.0),
        None => "too few batches for an interval".to_string(),
    };
    format!(
        "{NOT_CONVERGED}: after {io_count} IOs (the cap) the 95 % confidence interval of the mean is {reached}, not within +/- {:.1} %; the mean is less certain than asked (raise --max-ios, or accept a wider --bound)",
        bound * 100.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stats(unmapped: u64, reads: u64, read_bytes: u64) -> Value {
        json!({"unmapped_reads": unmapped, "page_bytes": 4096,
               "host": {"reads": reads, "read_bytes": read_bytes}})
    }

    fn identity(pairs: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn ram_backed_and_page_cached_targets_are_warned_about() {
        let shm = target_warning(&identity(&[("fs_type", "tmpfs")])).unwrap();
        assert!(shm.contains("tmpfs") && shm.contains("not flash"), "{shm}");
        assert!(target_warning(&identity(&[("device_name", "zram0")])).is_some());
        assert!(target_warning(&identity(&[("device_name", "ram0")])).is_some());
        let loop_shm = identity(&[
            ("device_name", "loop3"),
            ("loop_backing_file", "/dev/shm/x.img"),
            ("loop_backing_fs_type", "tmpfs"),
            ("loop_dio", "1"),
        ]);
        assert!(target_warning(&loop_shm)
            .unwrap()
            .contains("/dev/shm/x.img"));
        let cached = identity(&[
            ("device_name", "loop3"),
            ("loop_backing_file", "/srv/x.img"),
            ("loop_backing_fs_type", "ext4"),
            ("loop_dio", "0"),
        ]);
        assert!(target_warning(&cached).unwrap().contains("page cache"));
        // A loop device over a file on flash with direct IO, an ext4 file, an SSD: no warning.
        let direct = identity(&[
            ("device_name", "loop3"),
            ("loop_backing_file", "/srv/x.img"),
            ("loop_backing_fs_type", "ext4"),
            ("loop_dio", "1"),
        ]);
        assert_eq!(target_warning(&direct), None);
        assert_eq!(target_warning(&identity(&[("fs_type", "ext4")])), None);
        assert_eq!(
            target_warning(&identity(&[("device_name", "nvme0n1")])),
            None
        );
    }

    #[test]
    fn every_read_of_a_fresh_device_is_unmapped_and_warned_about() {
        // 1000 reads of 8 KiB: 2000 pages, all never written.
        let s = stats(2000, 1000, 1000 * 8192);
        assert_eq!(unmapped_read_fraction(&s), Some(1.0));
        let w = device_warnings(Some(&s));
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("100.0 % of reads hit never-written pages"));
        assert!(w[0].contains("prefill=on"), "{}", w[0]);
    }

    /// A profile that reads never-written pages from flash (mqsim-ref) is
    /// not told they were answered without flash: its warning says what
    /// its figures are.
    #[test]
    fn reads_of_never_written_pages_from_flash_are_warned_about_as_such() {
        let mut s = stats(2000, 1000, 1000 * 8192);
        s["unmapped_reads_read_flash"] = json!(true);
        let w = device_warnings(Some(&s));
        assert_eq!(w.len(), 1);
        assert!(!w[0].contains("without flash"), "{}", w[0]);
        assert!(w[0].contains("reads from flash"), "{}", w[0]);
        assert!(w[0].contains("prefill=on"), "{}", w[0]);
    }

    #[test]
    fn one_percent_is_tolerated_and_just_above_is_not() {
        assert!(device_warnings(Some(&stats(10, 1000, 1000 * 4096))).is_empty());
        assert_eq!(
            device_warnings(Some(&stats(11, 1000, 1000 * 4096))).len(),
            1
        );
    }

    #[test]
    fn small_reads_count_one_page_each() {
        // 512 B reads: one page per request, not an eighth of one.
        let s = stats(100, 400, 400 * 512);
        assert_eq!(unmapped_read_fraction(&s), Some(0.25));
    }

    #[test]
    fn real_devices_and_write_only_runs_report_nothing() {
        assert_eq!(unmapped_read_fraction(&json!({"x": 1})), None);
        assert_eq!(unmapped_read_fraction(&stats(0, 0, 0)), None);
        assert!(device_warnings(None).is_empty());
    }
}
