//! The probes themselves: each runs its experiment, keeps the curve, and
//! reads one number from it (or says why it cannot).

use flashlab_device::{Mode, Nanos};
use flashlab_pattern::rng::Rng;

use crate::session::Session;
use crate::{Curve, Estimate, FtlFamily, ProbeError, ProbeOptions, ProbeReport, QdLimit};

/// uFLIP's IO size for its write experiments (section 4: 32 KB IOs).
const IO_BYTES: u64 = 32 << 10;

fn median(v: &[Nanos]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    s[s.len() / 2] as f64
}

fn mean(v: &[Nanos]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64
}

/// Runs one probe; a budget that runs out leaves the rest "not measured",
/// any other error stops everything.
fn guarded(
    r: Result<Estimate, ProbeError>,
    unit: &str,
    out_of_budget: &mut bool,
) -> Result<Estimate, ProbeError> {
    match r {
        Ok(e) => Ok(e),
        Err(ProbeError::Budget) => {
            *out_of_budget = true;
            Ok(Estimate::skipped(unit, "the budget ran out"))
        }
        Err(e) => Err(e),
    }
}

/// Long: the probe's estimates in order within one time budget, sharing the write region and
/// its fill.
pub(crate) fn run_all(
    s: &mut Session,
    opts: &ProbeOptions,
    r: &mut ProbeReport,
) -> Result<(), ProbeError> {
    let lbs = s.device().info().logical_block_bytes.max(512) as u64;
    let size = s.device().info().size_bytes;
    let mut rng = Rng::new(opts.seed);
    let mut budget_out = false;
    // The write region: the start of the allowed range, whole units of 1 MiB.
    let region = opts.writes.and_then(|w| {
        let start = w.offset_bytes.div_ceil(1 << 20) << 20;
        let end = w.end_bytes().min(start + opts.region_bytes) >> 20 << 20;
        (end >= start + (8 << 20)).then_some((start, end - start))
    });
    let no_writes = if opts.writes.is_some() {
        "the allowed write range holds less than 8 MiB of whole MiB units"
    } else {
        "read-only (allow writes to a range with --allow-write-to)"
    };
    if let Some((base, len)) = region {
        // Written once so that reads find data and overwrites find old data
        // (uFLIP 4.1: a device's state decides what it shows).
        let ios: Vec<(u64, u32)> = (0..len / IO_BYTES)
            .map(|i| (base + i * IO_BYTES, IO_BYTES as u32))
            .collect();
        if let Err(e) = s.batch(&ios, Mode::Write, 1) {
            match e {
                ProbeError::Budget => budget_out = true,
                e => return Err(e),
            }
        }
    }
    let read_area = match region {
        Some(rg) => rg,
        None => (0, size / lbs * lbs),
    };
    // Reads first, while the region is laid out as the fill wrote it:
    // read-ahead follows the physical stripe, which random writes scatter
    // (Chen et al. 5.8).
    r.readahead_bytes = if budget_out {
        Estimate::skipped("B", "the budget ran out")
    } else {
        guarded(
            readahead(s, read_area, &mut rng).map(|(e, t)| {
                r.readahead_trigger = t;
                e
            }),
            "B",
            &mut budget_out,
        )?
    };
    r.parallelism = if budget_out {
        Estimate::skipped("x", "the budget ran out")
    } else {
        guarded(
            parallelism(s, read_area, lbs, &mut rng).map(|(e, limit)| {
                r.qd_limit = limit;
                e
            }),
            "x",
            &mut budget_out,
        )?
    };
    r.write_cache_bytes = match region {
        Some((b, l)) if !budget_out => {
            guarded(write_cache(s, b, l, &mut rng), "B", &mut budget_out)?
        }
        _ => Estimate::skipped(
            "B",
            if budget_out {
                "the budget ran out"
            } else {
                no_writes
            },
        ),
    };
    // A write-back cache absorbs the unit tests' writes and hides the
    // merges they time: where the device has a cache switch (hdparm -W, a
    // simulated profile's cache), it is off for those tests. Whether the
    // switch changed anything is measured (random 4 KiB writes after idling,
    // before and after): only then is it switched on again at the end, so a
    // device without a cache is not given one.
    let mut cache_switched_off = false;
    if let Some((b, l)) = region.filter(|_| !budget_out && r.write_cache_bytes.value.is_some()) {
        let before = guarded_ns(quick_writes(s, b, l, &mut rng), &mut budget_out)?;
        if !budget_out && s.set_write_cache(false).is_ok() {
            let after = guarded_ns(quick_writes(s, b, l, &mut rng), &mut budget_out)?;
            if after > 2.0 * before {
                cache_switched_off = true;
            }
            // Otherwise nothing changed: there was no cache to switch, and
            // switching "on" now would add one, so it stays as it is.
        }
    }
    r.map_granule_bytes = match region {
        Some((b, l)) if !budget_out => guarded(granule(s, b, l, lbs), "B", &mut budget_out)?,
        _ => Estimate::skipped(
            "B",
            if budget_out {
                "the budget ran out"
            } else {
                no_writes
            },
        ),
    };
    // Streams this far apart never share a unit (none of the field's devices
    // has units over 16 MiB), so the knee counts open units, not units.
    let spacing = region
        .map(|(_, l)| (l / 16).clamp(1 << 20, 16 << 20))
        .unwrap_or(1 << 20);
    r.open_units = match region {
        Some((b, l)) if !budget_out => {
            guarded(open_units(s, b, l, spacing), "units", &mut budget_out)?
        }
        _ => Estimate::skipped(
            "units",
            if budget_out {
                "the budget ran out"
            } else {
                no_writes
            },
        ),
    };
    let open = r.open_units.value.map(|v| v as u64);
    r.erase_unit_bytes = match region {
        Some((b, l)) if !budget_out => guarded(erase_unit(s, b, l, open), "B", &mut budget_out)?,
        _ => Estimate::skipped(
            "B",
            if budget_out {
                "the budget ran out"
            } else {
                no_writes
            },
        ),
    };
    let unit = r.erase_unit_bytes.value.map(|v| v as u64);
    r.ftl_family = match region {
        Some((b, l)) if !budget_out => guarded(
            family(s, b, l, unit, r.open_units.value, &mut rng),
            "",
            &mut budget_out,
        )?,
        _ => Estimate::skipped(
            "",
            if budget_out {
                "the budget ran out"
            } else {
                no_writes
            },
        ),
    };
    if cache_switched_off {
        s.set_write_cache(true).map_err(ProbeError::Device)?;
        for e in [
            &mut r.map_granule_bytes,
            &mut r.open_units,
            &mut r.erase_unit_bytes,
            &mut r.ftl_family,
        ] {
            e.reading
                .push_str(" (measured with the write cache switched off)");
        }
    }
    r.family = r.ftl_family.value.map(|v| {
        if v >= 1.0 {
            FtlFamily::LogBlock
        } else {
            FtlFamily::PageMapped
        }
    });
    Ok(())
}

/// Median latency of 16 random 4 KiB writes after idling.
fn quick_writes(s: &mut Session, base: u64, len: u64, rng: &mut Rng) -> Result<f64, ProbeError> {
    s.idle(5_000_000_000)?;
    let ios: Vec<(u64, u32)> = (0..16)
        .map(|_| (base + rng.below(len / 4096) * 4096, 4096))
        .collect();
    Ok(median(&s.batch(&ios, Mode::Write, 1)?))
}

fn guarded_ns(r: Result<f64, ProbeError>, out_of_budget: &mut bool) -> Result<f64, ProbeError> {
    match r {
        Ok(v) => Ok(v),
        Err(ProbeError::Budget) => {
            *out_of_budget = true;
            Ok(0.0)
        }
        Err(e) => Err(e),
    }
}

/// The erase (allocation) unit, from writes across candidate boundaries:
/// 2k sequential streams d bytes apart, written round-robin in 4 KiB IOs,
/// where k is the number of units open at once. While d is at most half the
/// unit the streams share k units or fewer and every write appends to an
/// open log; once d reaches the unit they need 2k units and every round
/// closes logs with merges (flashbench's idea of timing writes across
/// candidate boundaries; uFLIP's partitioning). The unit is the d where the
/// cost jumps and stays up.
fn erase_unit(
    s: &mut Session,
    base: u64,
    len: u64,
    open_units: Option<u64>,
) -> Result<Estimate, ProbeError> {
    let Some(k) = open_units else {
        return Ok(Estimate {
            value: None,
            unit: "B".into(),
            reading: "no partitioning knee, so no unit boundary to time: the device hides its unit (a page-mapped FTL, or a cache absorbing the writes)".into(),
            evidence: Vec::new(),
        });
    };
    let io = 4096u64;
    let streams = 2 * k.max(1);
    let rounds = 8u64;
    let mut curve = Curve::new(
        &format!("{streams} round-robin sequential 4 KiB streams d bytes apart"),
        "d (bytes)",
        "mean latency after the first 2 rounds (ns)",
    );
    let mut costs: Vec<(u64, f64)> = Vec::new();
    let mut d = 64u64 << 10;
    while streams * d <= len && d <= 64 << 20 {
        let mut ios = Vec::new();
        for r in 0..rounds {
            for i in 0..streams {
                ios.push((base + i * d + r * io, io as u32));
            }
        }
        let lat = s.batch(&ios, Mode::Write, 1)?;
        let m = mean(&lat[2 * streams as usize..]);
        curve.points.push((d as f64, m));
        costs.push((d, m));
        d *= 2;
    }
    let floor = costs.first().map(|c| c.1).unwrap_or(0.0);
    // The first d whose cost is over 2x the smallest spacing's and stays so.
    let unit = (0..costs.len())
        .find(|&i| costs[i..].iter().all(|c| c.1 > 2.0 * floor))
        .filter(|&i| i > 0)
        .map(|i| costs[i].0);
    let (value, reading) = match unit {
        Some(u) => (
            Some(u as f64),
            format!(
                "{streams} streams turn over 2x slower from {} apart on: from there each needs a unit of its own, so the unit is {}",
                crate::fmt_bytes(u as f64),
                crate::fmt_bytes(u as f64)
            ),
        ),
        None => (
            None,
            format!("no jump in cost as {streams} streams move apart: no unit boundary visible up to {}", crate::fmt_bytes(costs.last().map(|c| c.0).unwrap_or(0) as f64)),
        ),
    };
    Ok(Estimate {
        value,
        unit: "B".into(),
        reading,
        evidence: vec![curve],
    })
}

/// Units open for writing at once: N sequential streams, one per unit,
/// written round-robin (uFLIP's partitioning; flashbench's open-AU test). Up
/// to the number of open logs each stream appends to its own log; one more
/// and every round closes a log with a merge.
fn open_units(s: &mut Session, base: u64, len: u64, unit: u64) -> Result<Estimate, ProbeError> {
    let max_n = (len / unit).min(16);
    let io = IO_BYTES;
    let rounds = 16u64;
    let mut curve = Curve::new(
        &format!(
            "round-robin sequential writes over N streams {} apart, {} IOs",
            crate::fmt_bytes(unit as f64),
            crate::fmt_bytes(io as f64)
        ),
        "N units",
        "mean latency after the first round (ns)",
    );
    let mut base_lat = None;
    let mut knee = None;
    for n in 1..=max_n {
        // Each N starts half a unit in, after the previous N's streams, so
        // that its streams begin as fresh appends.
        let start = if n % 2 == 0 { 0 } else { rounds * io };
        let mut ios = Vec::new();
        for k in 0..rounds {
            for i in 0..n {
                ios.push((base + i * unit + start + k * io, io as u32));
            }
        }
        let lat = s.batch(&ios, Mode::Write, 1)?;
        let m = mean(&lat[n as usize..]);
        curve.points.push((n as f64, m));
        let b = *base_lat.get_or_insert(m);
        if knee.is_none() && m > 2.0 * b {
            knee = Some(n - 1);
            // One point past the knee is evidence enough; the rest costs merges.
            if n >= 3 {
                break;
            }
        }
    }
    let (value, reading) = match knee {
        Some(k) => (
            Some(k as f64),
            format!(
                "writes turn slow at {} streams (over 2x one stream's): {k} units open at once",
                k + 1
            ),
        ),
        None => (
            None,
            format!("no knee up to {max_n} streams: at least {max_n} units open, or no units (page-mapped)"),
        ),
    };
    Ok(Estimate {
        value,
        unit: "units".into(),
        reading,
        evidence: vec![curve],
    })
}

/// The mapping granule, through alignment costs (uFLIP's IOShift): write
/// sequentially in IOs of size g, once aligned to g and once shifted by g/2.
/// An IO that covers its granules whole costs no read-modify-write; shifted
/// by half, it cuts two. The ratio peaks at the granule: smaller IOs are
/// partial either way, larger ones shifted by g/2 are still granule-aligned.
fn granule(s: &mut Session, base: u64, len: u64, lbs: u64) -> Result<Estimate, ProbeError> {
    let mut curve = Curve::new(
        "sequential writes of g bytes shifted by g/2 over aligned",
        "g (bytes)",
        "latency ratio shifted/aligned",
    );
    let mut best: Option<(u64, f64)> = None;
    let mut g = (2 * lbs).max(1024);
    let count = 32u64;
    while g <= 128 << 10 {
        let span = count * g + g;
        if span > len {
            break;
        }
        let aligned: Vec<(u64, u32)> = (0..count).map(|i| (base + i * g, g as u32)).collect();
        let shifted: Vec<(u64, u32)> = (0..count)
            .map(|i| (base + len / 2 + i * g + g / 2, g as u32))
            .collect();
        let a = s.batch(&aligned, Mode::Write, 1)?;
        let b = s.batch(&shifted, Mode::Write, 1)?;
        // The first IOs of each pass pay for the switch between areas.
        let ratio = mean(&b[4..]) / mean(&a[4..]).max(1.0);
        curve.points.push((g as f64, ratio));
        if best.is_none_or(|(_, r)| ratio > r) {
            best = Some((g, ratio));
        }
        g *= 2;
    }
    // Below the granule both IOs are partial, and the shifted one cuts one
    // granule more: its ratio can tie the granule's. The largest size near
    // the peak is the granule.
    let best = best.map(|(_, peak)| {
        let g = curve
            .points
            .iter()
            .filter(|p| p.1 >= 0.8 * peak)
            .map(|p| p.0 as u64)
            .max()
            .unwrap_or(lbs);
        (g, peak)
    });
    let (value, reading) = match best {
        Some((g, r)) if r > 1.3 => (
            Some(g as f64),
            format!(
                "shifting by half costs most at {} (x{r:.2}): IOs are mapped in {} granules",
                crate::fmt_bytes(g as f64),
                crate::fmt_bytes(g as f64)
            ),
        ),
        Some((_, r)) => (
            Some(lbs as f64),
            format!("no shift costs over x1.3 (at most x{r:.2}): no granule coarser than the {lbs} B logical block is visible"),
        ),
        None => (None, "region too small".to_string()),
    };
    Ok(Estimate {
        value,
        unit: "B".into(),
        reading,
        evidence: vec![curve],
    })
}

/// The write cache: after the device has drained, a burst of writes;
/// cached writes return fast until the cache is full, then each waits for
/// flash. The knee is the bytes written before the latency jumps. A cache
/// that drains during the burst moves the knee later, by what drained;
/// after the knee every write waits for one write's worth to drain, so the
/// slow latency is the drain's time per IO, and while the fast writes
/// arrived the flash drained fast/slow of them: the cache is the knee
/// times (1 - fast/slow).
/// Two bursts: sequential 64 KiB writes, and random 4 KiB ones, because a
/// device whose flash absorbs sequential writes as fast as they come drains
/// its cache as fast as it fills and shows no knee with them.
fn write_cache(
    s: &mut Session,
    base: u64,
    len: u64,
    rng: &mut Rng,
) -> Result<Estimate, ProbeError> {
    let burst_bytes = len.min(256 << 20);
    let mut evidence = Vec::new();
    let mut found = None;
    for (io, random) in [(64u64 << 10, false), (4096u64, true)] {
        s.idle(5_000_000_000)?;
        let mut curve = Curve::new(
            &format!(
                "burst of {} {} writes after idling",
                if random { "random" } else { "sequential" },
                crate::fmt_bytes(io as f64)
            ),
            "bytes written before the IO",
            "median latency of 8 IOs (ns)",
        );
        let win = 8usize;
        let mut fast = None;
        let mut fast_ns = 0.0;
        let mut knee = None;
        let mut written = 0u64;
        let chunk = 64u64;
        let t0 = s.now_ns();
        // In chunks, so that a knee found early ends the burst; a minute of
        // device time at most (random writes on a USB stick take 0.25 s each).
        while written + chunk * io <= burst_bytes && s.now_ns() - t0 < 60_000_000_000 {
            let ios: Vec<(u64, u32)> = (0..chunk)
                .map(|i| {
                    let o = if random {
                        base + rng.below(len / io) * io
                    } else {
                        base + written + i * io
                    };
                    (o, io as u32)
                })
                .collect();
            let lat = s.batch(&ios, Mode::Write, 1)?;
            let f = *fast.get_or_insert_with(|| median(&lat[..win]));
            fast_ns = f;
            for (j, w) in lat.chunks(win).enumerate() {
                let m = median(w);
                let at = written + (j * win) as u64 * io;
                curve.points.push((at as f64, m));
                if knee.is_none() && m > 3.0 * f {
                    knee = Some(at);
                }
            }
            written += chunk * io;
            if knee.is_some_and(|k| written >= k + 2 * chunk * io) {
                break;
            }
        }
        if let Some(k) = knee.filter(|&k| k > 0) {
            // The slow latency: the median of the windows from the knee on.
            let slow: Vec<Nanos> = curve
                .points
                .iter()
                .filter(|p| p.0 >= k as f64)
                .map(|p| p.1 as Nanos)
                .collect();
            let slow_ns = median(&slow).max(1.0);
            let drained = (fast_ns / slow_ns).clamp(0.0, 1.0);
            evidence.push(curve);
            found = Some((k, random, drained));
            break;
        }
        evidence.push(curve);
    }
    let (value, reading) = match found {
        Some((k, random, drained)) => {
            // Whole pages of 4 KiB.
            let cache = ((k as f64 * (1.0 - drained)) as u64 / 4096 * 4096).max(4096);
            (
                Some(cache as f64),
                format!(
                    "{} writes slow down over 3x after {}; the flash drained {:.1} % of that meanwhile (the fast latency over the slow one after the knee): a write cache of about {}",
                    if random { "random" } else { "sequential" },
                    crate::fmt_bytes(k as f64),
                    drained * 100.0,
                    crate::fmt_bytes(cache as f64)
                ),
            )
        }
        None => (
            None,
            format!(
                "no knee in {} bursts of sequential or random writes: no write cache, or one larger than the burst",
                crate::fmt_bytes(burst_bytes as f64)
            ),
        ),
    };
    Ok(Estimate {
        value,
        unit: "B".into(),
        reading,
        evidence,
    })
}

/// Read-ahead (Chen et al. 5.2): after a random read, sequential 4 KiB reads
/// turn fast once the device detects the stream; then a read that skips
/// ahead by d is still fast while d is inside the prefetched window.
/// Also returns the number of sequential reads before the fast ones (the
/// detector's trigger).
fn readahead(
    s: &mut Session,
    area: (u64, u64),
    rng: &mut Rng,
) -> Result<(Estimate, Option<u32>), ProbeError> {
    let io = 4096u64;
    let (base, len) = area;
    let slots = (len / (4 << 20)).max(1);
    let pick = |rng: &mut Rng| base + rng.below(slots) * (4 << 20).min(len);
    let mut seq_curve = Curve::new(
        "sequential 4 KiB reads after a random one",
        "read number",
        "median latency over 4 trials (ns)",
    );
    let mut per_index: Vec<Vec<Nanos>> = vec![Vec::new(); 16];
    for _ in 0..4 {
        s.idle(1_000_000_000)?;
        let start = pick(rng);
        let ios: Vec<(u64, u32)> = (0..16).map(|i| (start + i * io, io as u32)).collect();
        let lat = s.batch(&ios, Mode::Read, 1)?;
        for (i, l) in lat.into_iter().enumerate() {
            per_index[i].push(l);
        }
    }
    let meds: Vec<f64> = per_index.iter().map(|v| median(v)).collect();
    for (i, m) in meds.iter().enumerate() {
        seq_curve.points.push((i as f64, *m));
    }
    let fast = meds.iter().cloned().fold(f64::INFINITY, f64::min);
    let trigger = (meds[0] > 2.0 * fast)
        .then(|| meds.iter().position(|&m| m < 1.5 * fast))
        .flatten();
    let Some(trigger) = trigger else {
        return Ok((
            Estimate {
                value: Some(0.0),
                unit: "B".into(),
                reading: "sequential reads never turn faster than the random one: no read-ahead"
                    .into(),
                evidence: vec![seq_curve],
            },
            None,
        ));
    };
    let mut jump_curve = Curve::new(
        &format!("{} sequential reads, then one d bytes further", trigger + 1),
        "d (bytes past the next read)",
        "latency of the skipping read (ns)",
    );
    let mut reach = 0u64;
    let mut d = io;
    while d <= 4 << 20 {
        s.idle(1_000_000_000)?;
        let start = pick(rng);
        let mut ios: Vec<(u64, u32)> = (0..=trigger as u64)
            .map(|i| (start + i * io, io as u32))
            .collect();
        let next = start + (trigger as u64 + 1) * io;
        if next + d + io > base + len {
            break;
        }
        ios.push((next + d, io as u32));
        let lat = s.batch(&ios, Mode::Read, 1)?;
        let l = *lat.last().unwrap_or(&0);
        jump_curve.points.push((d as f64, l as f64));
        if (l as f64) < 1.5 * fast {
            reach = d;
        } else {
            break;
        }
        d *= 2;
    }
    // The window holds the read that was skipped to as well as the skip.
    let window = reach + io;
    Ok((Estimate {
        value: Some(window as f64),
        unit: "B".into(),
        reading: format!(
            "reads turn fast from the {}th sequential read (a detector), and a read {} further is still fast: read-ahead of about {}",
            trigger + 1,
            crate::fmt_bytes(reach as f64),
            crate::fmt_bytes(window as f64)
        ),
        evidence: vec![seq_curve, jump_curve],
    }, Some(trigger as u32)))
}

/// Internal parallelism: random 4 KiB reads at queue depths 1..64; the
/// speed-up over depth 1 levels off at the number of requests the device
/// serves at once.
///
/// A curve that levels off is not always counting dies. Random reads on D
/// dies collide more as the depth grows, so a die-limited curve bends
/// gradually (a closed network of D stations: q/(q+D-1) of each die busy at
/// depth q). One stage that serves one command at a time (a controller
/// core, the host link) instead lets the curve rise almost linearly until
/// its rate is reached, then stops at once: the speed-up there is the
/// depth-1 latency over that stage's time per command, whatever the dies
/// (Wang et al. section 2.2.2 names "controller processing power" beside
/// the flash chips among the factors). So the knee's shape is read first
/// ([`read_qd_knee`]); a sharp knee is then timed again with requests of a
/// quarter (or four times) the size at the same depth: a per-command stage
/// serves both at the same rate of commands, a per-byte one (the link)
/// serves the smaller ones about four times as fast.
fn parallelism(
    s: &mut Session,
    area: (u64, u64),
    lbs: u64,
    rng: &mut Rng,
) -> Result<(Estimate, Option<QdLimit>), ProbeError> {
    let io = 4096u64.max(lbs);
    let (base, len) = area;
    let mut curve = Curve::new(
        "random 4 KiB reads at queue depth q",
        "q",
        "IOs per second (simulated or wall)",
    );
    let mut iops = Vec::new();
    let mut q = 1usize;
    while q <= 64 && q <= s.device().max_outstanding() {
        let v = read_rate(s, (base, len), q, io, rng)?;
        curve.points.push((q as f64, v.round()));
        iops.push((q, v));
        q *= 2;
    }
    let one = iops[0].1;
    let max = iops.iter().map(|x| x.1).fold(0.0, f64::max);
    let sat = iops
        .iter()
        .find(|x| x.1 >= 0.9 * max)
        .map(|x| x.0)
        .unwrap_or(1);
    let speedup = max / one;
    let mut evidence = vec![curve];
    let (limit, why) = match read_qd_knee(&iops) {
        Knee::Flat => (None, String::new()),
        Knee::Gradual(frac) => (
            Some(QdLimit::Dies),
            format!(
                "; the curve bends gradually (at depth {} it gives {:.0} % of depth 1 times the depth), as reads colliding on a few dies do",
                (sat / 2).max(1),
                frac * 100.0
            ),
        ),
        Knee::Sharp(frac) => {
            // The same depth, another request size: the smaller one a
            // quarter of the larger (4 KiB against 1 KiB where the device
            // takes 1 KiB reads, else 16 KiB against 4 KiB).
            let q = iops.last().map(|x| x.0).unwrap_or(1);
            let (small, large) = if lbs <= 1024 {
                (1024u64, io)
            } else {
                (io, 4 * io)
            };
            let other = if small == io { large } else { small };
            let v_other = read_rate(s, (base, len), q, other, rng)?;
            let v_io = iops.last().map(|x| x.1).unwrap_or(1.0);
            let (v_small, v_large) = if small == io {
                (v_io, v_other)
            } else {
                (v_other, v_io)
            };
            let mut sizes = Curve::new(
                &format!("random reads at queue depth {q}, two request sizes"),
                "request size (bytes)",
                "IOs per second (simulated or wall)",
            );
            sizes.points = vec![
                (small as f64, v_small.round()),
                (large as f64, v_large.round()),
            ];
            evidence.push(sizes);
            let ratio = v_small / v_large.max(1.0);
            // 1: per command; 4: per byte; the geometric middle decides.
            let limit = if ratio < 2.0 {
                QdLimit::PerCommand
            } else {
                QdLimit::PerByte
            };
            (
                Some(limit),
                format!(
                    "; but the curve rises almost linearly ({:.0} % of depth 1 times the depth just before the knee) and stops at once, and at depth {q} {} reads run x{ratio:.1} as many per second as {} ones: {}",
                    frac * 100.0,
                    crate::fmt_bytes(small as f64),
                    crate::fmt_bytes(large as f64),
                    match limit {
                        QdLimit::PerCommand => format!("one stage serving one command at a time caps it at {max:.0} commands per second (a controller core), and the dies behind it are not counted by this curve"),
                        _ => "a per-byte stage (the link) caps it, and the dies behind it are not counted by this curve".to_string(),
                    }
                ),
            )
        }
    };
    Ok((
        Estimate {
            value: Some((speedup * 10.0).round() / 10.0),
            unit: "x".into(),
            reading: format!(
                "random reads scale x{speedup:.1} over queue depth 1, 90 % of it at depth {sat}: about {} requests served at once{why}",
                speedup.round() as u64
            ),
            evidence,
        },
        limit,
    ))
}

/// Random reads of `size` bytes kept `q` outstanding: IOs per second.
fn read_rate(
    s: &mut Session,
    area: (u64, u64),
    q: usize,
    size: u64,
    rng: &mut Rng,
) -> Result<f64, ProbeError> {
    let (base, len) = area;
    let n = (64 * q).max(256);
    let ios: Vec<(u64, u32)> = (0..n)
        .map(|_| (base + rng.below(len / size) * size, size as u32))
        .collect();
    let t0 = s.now_ns();
    s.batch(&ios, Mode::Read, q)?;
    let t = (s.now_ns() - t0).max(1) as f64;
    Ok(n as f64 / t * 1e9)
}

/// The shape of a queue-depth curve's knee.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Knee {
    /// No speed-up worth a knee (under x1.5), or none before the deepest
    /// depth measured.
    Flat,
    /// The depth before the knee gives under 90 % of depth 1's rate times
    /// the depth (the fraction): die collisions bend the curve early.
    Gradual(f64),
    /// It gives 90 % or more: linear up to the knee, then flat.
    Sharp(f64),
}

/// Reads the knee of a queue-depth curve, `(depth, IOs per second)` at
/// depths doubling from 1: the knee is the first depth reaching 90 % of the
/// highest rate; the depth before it tells a sharp knee (one serial stage)
/// from a gradual one (colliding dies). A curve still rising at its last
/// depth has no knee to read (`Flat`, as one with no speed-up).
pub fn read_qd_knee(iops: &[(usize, f64)]) -> Knee {
    let Some(&(_, one)) = iops.first() else {
        return Knee::Flat;
    };
    let max = iops.iter().map(|x| x.1).fold(0.0, f64::max);
    let Some(k) = iops.iter().position(|x| x.1 >= 0.9 * max) else {
        return Knee::Flat;
    };
    if max < 1.5 * one || k == 0 {
        return Knee::Flat;
    }
    let (q_before, v_before) = iops[k - 1];
    let frac = v_before / (q_before as f64 * one).max(1e-9);
    // The knee must be followed by a plateau: a curve reaching 90 % only at
    // its last depth may still be climbing.
    if k + 1 >= iops.len() {
        return Knee::Gradual(frac);
    }
    if frac >= 0.9 {
        Knee::Sharp(frac)
    } else {
        Knee::Gradual(frac)
    }
}

/// The FTL family from uFLIP Table 3's columns: random writes against
/// sequential ones (RW/SW), their locality response (random writes confined
/// to one unit), and the partitioning knee. A page-mapped FTL writes random
/// pages like sequential ones; a log-block FTL merges a unit for them.
fn family(
    s: &mut Session,
    base: u64,
    len: u64,
    unit: Option<u64>,
    open_units: Option<f64>,
    rng: &mut Rng,
) -> Result<Estimate, ProbeError> {
    let n = 96u64;
    let sw: Vec<(u64, u32)> = (0..n)
        .map(|i| (base + i * IO_BYTES, IO_BYTES as u32))
        .collect();
    let rw: Vec<(u64, u32)> = (0..n)
        .map(|_| (base + rng.below(len / IO_BYTES) * IO_BYTES, IO_BYTES as u32))
        .collect();
    let area = unit.unwrap_or(4 << 20).min(len);
    let local: Vec<(u64, u32)> = (0..n)
        .map(|_| {
            (
                base + rng.below(area / IO_BYTES) * IO_BYTES,
                IO_BYTES as u32,
            )
        })
        .collect();
    s.idle(1_000_000_000)?;
    let sw_ns = mean(&s.batch(&sw, Mode::Write, 1)?[8..]);
    s.idle(1_000_000_000)?;
    let rw_ns = mean(&s.batch(&rw, Mode::Write, 1)?[8..]);
    s.idle(1_000_000_000)?;
    let local_ns = mean(&s.batch(&local, Mode::Write, 1)?[8..]);
    let mut curve = Curve::new(
        "32 KiB writes (uFLIP Table 3 columns)",
        "0 = sequential, 1 = random in the region, 2 = random in one unit",
        "mean latency (ns)",
    );
    curve.points = vec![(0.0, sw_ns), (1.0, rw_ns), (2.0, local_ns)];
    let ratio = rw_ns / sw_ns.max(1.0);
    let log_block = ratio > 3.0 || open_units.is_some();
    let reading = format!(
        "random writes cost x{ratio:.1} sequential ones, x{:.1} when confined to one unit; {}: {}",
        local_ns / sw_ns.max(1.0),
        match open_units {
            Some(k) => format!("a partitioning knee at {} streams", k + 1.0),
            None => "no partitioning knee".to_string(),
        },
        if log_block {
            "a log-block FTL (random writes pay merges, streams share few logs)"
        } else {
            "a page-mapped FTL (random writes cost about what sequential ones do)"
        }
    );
    Ok(Estimate {
        value: Some(if log_block { 1.0 } else { 0.0 }),
        unit: "".into(),
        reading,
        evidence: vec![curve],
    })
}

/// The family a report's `ftl_family` estimate names.
pub fn family_from(e: &Estimate) -> Option<FtlFamily> {
    e.value.map(|v| {
        if v >= 1.0 {
            FtlFamily::LogBlock
        } else {
            FtlFamily::PageMapped
        }
    })
}
