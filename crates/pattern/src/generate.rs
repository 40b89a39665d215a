//! Pure, seeded generation of a pattern's IOs.
//!
//! A stream's IO sequence is a function of (spec, stream number) alone: no
//! clock, no device, no global state. The executor pulls IOs from one
//! [`StreamGen`] per stream; the dry run and the tests pull from the same
//! generators, so what a dry run prints is exactly what a run would do.

use flashlab_device::Mode;

use crate::rng::{derive_seed, Permutation, Rng};
use crate::skew::{normal_slot, pareto_rank, ZipfRanks, ZonedSlots};
use crate::spec::{Basic, Location, PatternSpec};

/// One IO the pattern asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedIo {
    /// 0-based position in its stream (IOIgnore counts these).
    pub index: u64,
    pub stream: u64,
    pub offset_bytes: u64,
    pub size_bytes: u64,
    pub mode: Mode,
}

/// How many IOSize slots a basic pattern has in a target of `target_size`
/// bytes. Shifted patterns lose the last slot when it would cross the end:
/// the target range is a hard limit, IOShift does not widen it.
pub fn slot_count(basic: &Basic, target_size: u64) -> u64 {
    target_size.saturating_sub(basic.io_shift_bytes) / basic.io_size_bytes.max(1)
}

/// Generates the location (byte offset relative to the stream's
/// TargetOffset) of one basic pattern's j-th IO.
#[derive(Clone, Debug)]
struct LocationGen {
    io_size: u64,
    io_shift: u64,
    slots: u64,
    kind: LocKind,
}

#[derive(Clone, Debug)]
enum LocKind {
    Sequential,
    Random(Rng),
    /// Slot `(incr x j) mod slots`, plus one per completed pass when
    /// |incr| > 1 (reverse patterns count down from the last slot).
    Ordered {
        incr: i64,
    },
    Partitioned {
        partitions: u64,
        slots_per_partition: u64,
    },
    Stride {
        step_bytes: u64,
        positions: u64,
    },
    /// Selection sampling (Knuth's Algorithm S): visits exactly `take` of the
    /// slots in ascending order per pass, each subset equally likely.
    SkipSequential {
        rng: Rng,
        take: u64,
        cursor: u64,
        chosen: u64,
    },
    RandomOnce {
        seed: u64,
        pass: u64,
        perm: Permutation,
    },
    /// A popularity rank, then its slot through a fixed seeded permutation
    /// (the hot slots scattered over the target).
    Zipf {
        rng: Rng,
        ranks: ZipfRanks,
        scatter: Permutation,
    },
    Pareto {
        rng: Rng,
        h: f64,
        scatter: Permutation,
    },
    Normal {
        rng: Rng,
        sigma_percent: f64,
    },
    Zoned {
        rng: Rng,
        zones: ZonedSlots,
    },
}

impl LocationGen {
    fn new(basic: &Basic, target_size: u64, seed: u64) -> LocationGen {
        let slots = slot_count(basic, target_size);
        assert!(slots > 0, "validated spec has at least one slot");
        let kind = match &basic.location {
            Location::Sequential => LocKind::Sequential,
            Location::Random => LocKind::Random(Rng::new(seed)),
            &Location::Ordered { incr } => LocKind::Ordered { incr },
            &Location::Partitioned { partitions } => LocKind::Partitioned {
                partitions,
                slots_per_partition: slots / partitions,
            },
            &Location::Stride { gap_bytes } => {
                let step = basic.io_size_bytes + gap_bytes;
                let usable = target_size - basic.io_shift_bytes;
                LocKind::Stride {
                    step_bytes: step,
                    positions: (usable - basic.io_size_bytes) / step + 1,
                }
            }
            &Location::SkipSequential { fraction } => LocKind::SkipSequential {
                rng: Rng::new(seed),
                take: ((slots as f64 * fraction).round() as u64).clamp(1, slots),
                cursor: 0,
                chosen: 0,
            },
            Location::RandomOnce => LocKind::RandomOnce {
                seed,
                pass: 0,
                perm: Permutation::new(slots, seed),
            },
            // The draws and the scattering permutation from separate seeds.
            &Location::Zipf { theta } => LocKind::Zipf {
                rng: Rng::new(seed),
                ranks: ZipfRanks::new(slots, theta),
                scatter: Permutation::new(slots, derive_seed(seed, 1)),
            },
            &Location::Pareto { h } => LocKind::Pareto {
                rng: Rng::new(seed),
                h,
                scatter: Permutation::new(slots, derive_seed(seed, 1)),
            },
            &Location::Normal { sigma_percent } => LocKind::Normal {
                rng: Rng::new(seed),
                sigma_percent,
            },
            Location::Zoned { zones } => LocKind::Zoned {
                rng: Rng::new(seed),
                zones: ZonedSlots::new(slots, zones),
            },
        };
        LocationGen {
            io_size: basic.io_size_bytes,
            io_shift: basic.io_shift_bytes,
            slots,
            kind,
        }
    }

    /// The relative offset of the j-th IO; `j` counts up by one per call.
    fn offset(&mut self, j: u64) -> u64 {
        let n = self.slots;
        let slot = match &mut self.kind {
            LocKind::Sequential => j % n,
            LocKind::Random(rng) => rng.below(n),
            LocKind::Ordered { incr } => {
                // Each pass over the target starts one slot further than the
                // last, so gaps (|Incr| > 1) visit new slots after wrapping
                // instead of rewriting the same few.
                let raw = incr.unsigned_abs() as u128 * j as u128;
                let pass = if incr.unsigned_abs() > 1 {
                    raw / n as u128
                } else {
                    0
                };
                let step = ((raw + pass) % n as u128) as u64;
                if *incr >= 0 {
                    step
                } else {
                    n - 1 - step
                }
            }
            LocKind::Partitioned {
                partitions,
                slots_per_partition,
            } => {
                let p = j % *partitions;
                let o = (j / *partitions) % *slots_per_partition;
                p * *slots_per_partition + o
            }
            LocKind::Stride {
                step_bytes,
                positions,
            } => {
                return self.io_shift + (j % *positions) * *step_bytes;
            }
            LocKind::SkipSequential {
                rng,
                take,
                cursor,
                chosen,
            } => loop {
                if *chosen == *take {
                    *cursor = 0;
                    *chosen = 0;
                }
                let t = *cursor;
                *cursor += 1;
                // Select slot t with probability (still needed)/(still left).
                if rng.below(n - t) < *take - *chosen {
                    *chosen += 1;
                    break t;
                }
            },
            LocKind::RandomOnce { seed, pass, perm } => {
                let this_pass = j / n;
                if this_pass != *pass {
                    *pass = this_pass;
                    *perm = Permutation::new(n, derive_seed(*seed, this_pass));
                }
                perm.apply(j % n)
            }
            LocKind::Zipf {
                rng,
                ranks,
                scatter,
            } => scatter.apply(ranks.draw(rng)),
            LocKind::Pareto { rng, h, scatter } => scatter.apply(pareto_rank(n, *h, rng)),
            LocKind::Normal { rng, sigma_percent } => normal_slot(n, *sigma_percent, rng),
            LocKind::Zoned { rng, zones } => zones.draw(rng),
        };
        debug_assert!(slot < n);
        self.io_shift + slot * self.io_size
    }
}

/// fio's bssplit: each IO's size drawn by count shares, its offset on the
/// grid of the smallest size. Sequential IOs follow each other (the next
/// starts where the last ended, back to the start when it would not fit);
/// random IOs are uniform over the grid positions where they fit.
#[derive(Clone, Debug)]
struct SplitGen {
    /// (size, cumulative percent), ascending by cumulative percent.
    sizes: Vec<(u64, u64)>,
    sizes_rng: Rng,
    grid: u64,
    /// `None` for sequential: the byte cursor is used instead.
    random: Option<Rng>,
    cursor: u64,
}

impl SplitGen {
    fn new(spec: &PatternSpec, seed: u64) -> SplitGen {
        let mut cumulative = 0;
        let sizes = spec
            .io_size_split
            .iter()
            .map(|x| {
                cumulative += x.percent;
                (x.size_bytes, cumulative)
            })
            .collect();
        SplitGen {
            sizes,
            sizes_rng: Rng::new(derive_seed(seed, 4)),
            grid: spec.primary.io_size_bytes,
            random: matches!(spec.primary.location, Location::Random)
                .then(|| Rng::new(derive_seed(seed, 1))),
            cursor: 0,
        }
    }

    /// The next IO's (relative offset, size) in a target of `target_size`.
    fn next(&mut self, target_size: u64) -> (u64, u64) {
        let draw = self.sizes_rng.below(100);
        let size = self
            .sizes
            .iter()
            .find(|(_, cum)| draw < *cum)
            .map_or(self.sizes[self.sizes.len() - 1].0, |(s, _)| *s);
        let offset = match &mut self.random {
            Some(rng) => rng.below((target_size - size) / self.grid + 1) * self.grid,
            None => {
                if self.cursor + size > target_size {
                    self.cursor = 0;
                }
                let at = self.cursor;
                self.cursor += size;
                at
            }
        };
        (offset, size)
    }
}

/// The IOs of one stream of a pattern, in submission order.
#[derive(Clone, Debug)]
pub struct StreamGen {
    stream: u64,
    target_offset: u64,
    target_size: u64,
    io_count: u64,
    next_index: u64,
    primary: (LocationGen, u64, Mode),
    secondary: Option<(LocationGen, u64, Mode)>,
    ratio: (u64, u64),
    /// IOs generated so far by each sub-pattern.
    taken: (u64, u64),
    /// `Mix::random_order`: the draws of each IO's side.
    order_rng: Option<Rng>,
    /// `Mix::shared_location`.
    shared_location: bool,
    /// `PatternSpec::io_size_split`, when set.
    split: Option<SplitGen>,
}

impl StreamGen {
    pub fn new(spec: &PatternSpec, stream: u64) -> StreamGen {
        assert!(stream < spec.parallel_degree);
        let (target_offset, target_size) = spec.stream_target(stream);
        let stream_seed = derive_seed(spec.seed, stream);
        let make = |b: &Basic, label: u64| {
            (
                LocationGen::new(b, target_size, derive_seed(stream_seed, label)),
                b.io_size_bytes,
                b.mode,
            )
        };
        let primary = make(&spec.primary, 1);
        let secondary = spec.mix.as_ref().map(|m| make(&m.secondary, 2));
        let ratio = spec
            .mix
            .as_ref()
            .map(|m| (m.ratio_primary, m.ratio_secondary))
            .unwrap_or((1, 0));
        StreamGen {
            stream,
            target_offset,
            target_size,
            // A time-based stream never runs out: the executor stops it at
            // the runtime.
            io_count: if spec.time_based {
                u64::MAX
            } else {
                spec.io_count
            },
            next_index: 0,
            primary,
            secondary,
            ratio,
            taken: (0, 0),
            order_rng: spec
                .mix
                .as_ref()
                .filter(|m| m.random_order)
                .map(|_| Rng::new(derive_seed(stream_seed, 3))),
            shared_location: spec.mix.as_ref().is_some_and(|m| m.shared_location),
            split: (!spec.io_size_split.is_empty()).then(|| SplitGen::new(spec, stream_seed)),
        }
    }

    /// This stream's target space: `[offset, offset + size)`.
    pub fn target(&self) -> (u64, u64) {
        (self.target_offset, self.target_size)
    }

    pub fn remaining(&self) -> u64 {
        self.io_count - self.next_index
    }
}

impl Iterator for StreamGen {
    type Item = PlannedIo;

    fn next(&mut self) -> Option<PlannedIo> {
        if self.next_index >= self.io_count {
            return None;
        }
        let i = self.next_index;
        self.next_index += 1;
        if let Some(split) = self.split.as_mut() {
            let (rel, size) = split.next(self.target_size);
            debug_assert!(rel + size <= self.target_size, "IO leaves the target");
            return Some(PlannedIo {
                index: i,
                stream: self.stream,
                offset_bytes: self.target_offset + rel,
                size_bytes: size,
                mode: self.primary.2,
            });
        }
        let (a, b) = self.ratio;
        let use_secondary = self.secondary.is_some()
            && match self.order_rng.as_mut() {
                Some(rng) => rng.below(a + b) >= a,
                None => i % (a + b) >= a,
            };
        let (gen, size, mode, j) = if use_secondary {
            let (g, s, m) = self.secondary.as_mut().expect("checked");
            self.taken.1 += 1;
            (g, *s, *m, self.taken.1 - 1)
        } else {
            let (g, s, m) = &mut self.primary;
            self.taken.0 += 1;
            (g, *s, *m, self.taken.0 - 1)
        };
        // one address stream: the primary's location function at the IO's index
        let rel = if self.shared_location {
            self.primary.0.offset(i)
        } else {
            gen.offset(j)
        };
        debug_assert!(rel + size <= self.target_size, "IO leaves the target");
        Some(PlannedIo {
            index: i,
            stream: self.stream,
            offset_bytes: self.target_offset + rel,
            size_bytes: size,
            mode,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let r = self.remaining() as usize;
        (r, Some(r))
    }
}

/// All streams' IOs, one stream after another (for dry runs and tests; the
/// executor interleaves streams by time instead). A time-based pattern's
/// streams are endless: take what you need.
pub fn all_ios(spec: &PatternSpec) -> impl Iterator<Item = PlannedIo> + '_ {
    (0..spec.parallel_degree).flat_map(move |p| StreamGen::new(spec, p))
}

/// Byte ranges `[start, end)` a pattern touches, merged, separately for IOs
/// that modify the device and IOs that only read it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Touched {
    pub written: Vec<(u64, u64)>,
    pub read: Vec<(u64, u64)>,
}

impl Touched {
    pub fn of(spec: &PatternSpec) -> Touched {
        let mut written = Vec::new();
        let mut read = Vec::new();
        if spec.time_based {
            // How many IOs a time-based run does depends on the device: say
            // what it may touch, each stream's whole slice.
            for p in 0..spec.parallel_degree {
                let (start, size) = spec.stream_target(p);
                for b in spec.basics() {
                    let to = if b.mode.modifies() {
                        &mut written
                    } else {
                        &mut read
                    };
                    to.push((start, start + size));
                }
            }
            return Touched {
                written: merge(written),
                read: merge(read),
            };
        }
        for io in all_ios(spec) {
            let r = (io.offset_bytes, io.offset_bytes + io.size_bytes);
            if io.mode.modifies() {
                written.push(r);
            } else {
                read.push(r);
            }
        }
        Touched {
            written: merge(written),
            read: merge(read),
        }
    }
}

fn merge(mut ranges: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (s, e) in ranges {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}
