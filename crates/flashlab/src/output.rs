//! Human-readable output: tables of run statistics and dry-run listings.

use flashlab_device::DeviceInfo;
use flashlab_pattern::units::{format_duration_ns, format_size};
use flashlab_results::{RunSummary, Throughput};

pub fn device_line(info: &DeviceInfo, engine: &str) -> String {
    let kind = match info.kind {
        flashlab_device::DeviceKind::File => "file",
        flashlab_device::DeviceKind::BlockDevice => "block device",
        flashlab_device::DeviceKind::Simulated => "simulated SSD",
    };
    let clock = match info.clock {
        flashlab_device::ClockKind::Wall => "wall clock",
        flashlab_device::ClockKind::Simulated => "simulated time",
    };
    format!(
        "{} ({kind}, {}, logical block {} B), engine {engine}, {clock}",
        info.name,
        format_size(info.size_bytes),
        info.logical_block_bytes
    )
}

pub const HEADER: [&str; 10] = [
    "run", "IOs", "mean", "min", "p50", "p99", "p99.9", "max", "IOPS", "MB/s",
];

fn lat(ns: u64) -> String {
    format_duration_ns(ns)
}

pub fn row(name: &str, t: &Throughput) -> [String; 10] {
    [
        name.to_string(),
        t.ios.to_string(),
        lat(t.latency.mean_ns.round() as u64),
        lat(t.latency.min_ns),
        lat(t.latency.p50_ns),
        lat(t.latency.p99_ns),
        lat(t.latency.p999_ns),
        lat(t.latency.max_ns),
        format!("{:.0}", t.iops),
        format!("{:.1}", t.mb_per_s),
    ]
}

/// The table rows of one run: the run itself, then one per mode for mixes.
pub fn rows(s: &RunSummary) -> Vec<[String; 10]> {
    rows_of(&s.name, &s.stats)
}

/// [`rows`] of a run's name and statistics.
pub fn rows_of(name: &str, stats: &flashlab_results::RunStats) -> Vec<[String; 10]> {
    let mut out = vec![row(name, &stats.all)];
    for (mode, t) in &stats.by_mode {
        out.push(row(&format!("  {mode}"), t));
    }
    out
}

/// Formats rows under the header with right-aligned numbers.
pub fn table(rows: &[[String; 10]]) -> String {
    let mut widths = HEADER.map(str::len);
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r.iter()) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 0 {
                    format!("{c:<w$}", w = widths[i])
                } else {
                    format!("{c:>w$}", w = widths[i])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut s = line(&HEADER.map(String::from));
    for r in rows {
        s.push('\n');
        s += &line(r);
    }
    s
}

/// Merged byte ranges, abbreviated: "3 ranges, 96KiB: [0, 32768) [65536, 131072) ...".
pub fn ranges(r: &[(u64, u64)], show: usize) -> String {
    if r.is_empty() {
        return "none".into();
    }
    let total: u64 = r.iter().map(|(s, e)| e - s).sum();
    let hull = (r[0].0, r[r.len() - 1].1);
    let mut s = format!(
        "{} range{} totalling {} within [{}, {})",
        r.len(),
        if r.len() == 1 { "" } else { "s" },
        format_size(total),
        hull.0,
        hull.1
    );
    if r.len() > 1 {
        s += ":";
        for (a, b) in r.iter().take(show) {
            s += &format!(" [{a}, {b})");
        }
        if r.len() > show {
            s += " ...";
        }
    }
    s
}

/// A rate with a K/M suffix and three significant digits: `51.2 K`, `812`.
pub fn format_rate(per_s: f64) -> String {
    if per_s >= 1e6 {
        format!("{:.2} M", per_s / 1e6)
    } else if per_s >= 1e3 {
        format!("{:.1} K", per_s / 1e3)
    } else {
        format!("{per_s:.0}")
    }
}
