//! Simulator configuration: the TOML profile format (serde, `deny_unknown_fields`),
//! byte sizes ("4GiB"), `key=value` overrides and validation.
//!
//! A profile is one TOML document with the sections `[geometry]`, `[nand]`,
//! `[host]`, `[ftl]`, `[gc]`, `[wear]`, `[cache]`, `[readahead]`, `[check]`,
//! `[sched]` (die scheduling) and `[reorg]` (internal reorganisation).
//! Every built-in profile is such a file under `crates/sim/profiles/`;
//! `flashlab sim profiles` lists them and [`crate::profile_toml`] prints one.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ConfigError;

/// A size in bytes that reads and writes as `"4GiB"`, `"512KiB"`, `"8MB"` or a plain integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteSize(pub u64);

impl ByteSize {
    /// Parse `"4GiB"`, `"4 GiB"`, `"1.5GiB"`, `"512"`, `"8MB"`, `"128k"` with
    /// the tool's one size parser (`flashlab_pattern::units::parse_size`:
    /// `GB` is 10^9, `GiB` and `G` are 2^30), so a unit means the same here
    /// as in `--target-size`.
    pub fn parse(text: &str) -> Result<ByteSize, flashlab_pattern::units::UnitError> {
        flashlab_pattern::units::parse_size(text).map(ByteSize)
    }
}

/// The tool's one size printer (`flashlab_pattern::units::format_size`):
/// the largest exact binary unit, or the decimal one when that is how the
/// size was written (`capacity=4GB` echoes as `4GB`, not `3906250KiB`).
/// What it prints parses back to the same bytes, so TOML round-trips hold.
impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&flashlab_pattern::units::format_size(self.0))
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(ByteSize(n)),
            Raw::Text(t) => ByteSize::parse(&t).map_err(serde::de::Error::custom),
        }
    }
}

/// The NAND cell type; it picks the default timing (`nand::NandTiming`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CellKind {
    Slc,
    Mlc,
    Tlc,
}

impl CellKind {
    pub fn name(self) -> &'static str {
        match self {
            CellKind::Slc => "slc",
            CellKind::Mlc => "mlc",
            CellKind::Tlc => "tlc",
        }
    }
}

/// Which page of a block is of which kind (`nand.page_kind_order`, with
/// `nand.program_ns_by_page_kind`; docs/sim.md, "Service times vary").
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PageKindOrder {
    /// Page `i` is of kind `i % kinds`: lower and upper pages alternate
    /// (MQSim's MLC rule, `pageID % 2`). The same mix of kinds as a real
    /// part, not its order.
    #[default]
    Cyclic,
    /// The order a real part programs its word lines in. MLC: the lower page
    /// of word line n + 1 is programmed before the upper page of word line
    /// n, so page 0 and the odd pages but the last are lower pages, page 2,
    /// the even pages after it and the last page upper ones (the "distance
    /// 3" pairing of Linux's MTD layer, `dist3_pairing_scheme`: a lower page
    /// `2k - 1` is paired with upper page `2k + 2`). TLC: MQSim's rule after
    /// Yaakobi et al. ("Characterization and Error-Correcting Codes for TLC
    /// Flash Memories", ICNC 2012): pages 0-5 lower, 6-7 middle, then pairs
    /// of pages cycling lower, middle, upper.
    Wordline,
}

impl PageKindOrder {
    fn is_cyclic(&self) -> bool {
        *self == PageKindOrder::Cyclic
    }
}

/// A whole simulator configuration (one profile).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Profile name (`ssd-m`).
    pub name: String,
    /// One line: what the profile models.
    #[serde(default)]
    pub description: String,
    /// Where the numbers come from.
    #[serde(default)]
    pub source: String,
    /// Which published behaviour the profile should show (and which test checks it).
    #[serde(default)]
    pub behaviour: String,
    pub geometry: GeometryConfig,
    pub nand: NandConfig,
    pub host: HostConfig,
    #[serde(default)]
    pub ftl: FtlConfig,
    #[serde(default)]
    pub gc: GcConfig,
    #[serde(default)]
    pub wear: WearConfig,
    #[serde(default)]
    pub cache: CacheConfig,
    #[serde(default)]
    pub readahead: ReadaheadConfig,
    #[serde(default)]
    pub check: CheckConfig,
    #[serde(default)]
    pub sched: SchedConfig,
    /// Internal reorganisation on a timer under sustained writes, and
    /// cleaning after TRIM (Hudlet & Schall section 6, Figures 4 and 5); off
    /// unless a profile sets it (and then absent from the serialized config,
    /// so other profiles' identities do not change).
    #[serde(default, skip_serializing_if = "ReorgConfig::is_off")]
    pub reorg: ReorgConfig,
    /// What the vendor rates the device to endure (`flashlab oltp`'s
    /// endurance estimate, Wang et al. Table 6); absent for most profiles.
    #[serde(default, skip_serializing_if = "EnduranceConfig::is_empty")]
    pub endurance: EnduranceConfig,
}

/// Rated endurance, as published: never used by the simulation itself.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EnduranceConfig {
    /// Bytes the vendor guarantees can be written over the device's life.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rated_lifetime_writes_bytes: Option<u64>,
    /// Program/erase cycles each block is rated for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rated_pe_cycles: Option<u64>,
    /// Where the numbers come from, quoted.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
}

impl EnduranceConfig {
    pub fn is_empty(&self) -> bool {
        self.rated_lifetime_writes_bytes.is_none()
            && self.rated_pe_cycles.is_none()
            && self.source.is_empty()
    }
}

/// Channels x chips x dies x planes x blocks x pages. The number of blocks is
/// derived from the logical capacity and the over-provisioning.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GeometryConfig {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    /// Planes per die: counted in the capacity; with `nand.multi_plane` a die
    /// also reads or programs one page per plane at once.
    pub planes_per_die: u32,
    pub pages_per_block: u32,
    /// Flash page size = the mapping unit of the page FTL.
    pub page_bytes: ByteSize,
    /// Logical (host-visible) capacity.
    pub capacity: ByteSize,
    /// p in physical = logical x (1 + p).
    pub over_provisioning: f64,
}

/// NAND timing. `cell` picks a preset (SLC/MLC/TLC); any field given overrides it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NandConfig {
    pub cell: CellKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erase_ns: Option<u64>,
    /// Command/address cycles per flash operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_ns: Option<u64>,
    /// Channel (NAND bus) transfer time per byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus_ns_per_byte: Option<f64>,
    /// GC relocation with the die's copy-back (no channel transfer).
    #[serde(default = "yes")]
    pub copyback: bool,
    /// Multi-plane operations (ONFI multi-plane read / program): a die reads
    /// or programs up to `geometry.planes_per_die` pages, one per plane, in
    /// one array time; the transfers still cross the channel one by one.
    /// Off: a die does one page operation at a time (planes count capacity).
    #[serde(default, skip_serializing_if = "is_false")]
    pub multi_plane: bool,
    /// The ONFI rule for multi-plane operations: the pages sit at the same
    /// page index in their blocks (true, default); false models parts with
    /// independent page addresses per plane.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub multi_plane_same_page: bool,
    /// Die time each page after the first adds to a multi-plane operation
    /// (ONFI tDBSY, the dummy busy between planes: 1 us max).
    #[serde(default = "multi_plane_ns", skip_serializing_if = "is_multi_plane_ns")]
    pub multi_plane_ns: u64,
    /// Service-time variance (docs/sim.md, "Service times vary"). Every
    /// field below is off by default, so a profile that names none of them
    /// gives the same results as before they existed.
    ///
    /// Array program time of each page kind, by the page's index in its
    /// block: page `i` is of kind `i % len` (MLC: `[lower, upper]`, TLC:
    /// `[lower, middle, upper]`). Where `program_ns` is given too, the kinds
    /// are scaled so that their mean is `program_ns` (they give the split, it
    /// the mean: an override of `nand.program_ns`, as `flashlab.fit` makes,
    /// moves every kind); otherwise `program_ns` becomes their mean. Real parts interleave the pairs (the upper page of
    /// word line n is programmed after the lower page of word line n + 1):
    /// `page_kind_order = "wordline"` models that order; the default
    /// alternation has the same mix of kinds and the same mean.
    /// Source: Grupp et al., "Characterizing Flash Memory: Anomalies,
    /// Observations, and Applications" (MICRO 2009) measured MLC program
    /// latency differing strongly between the fast and the slow page of a
    /// pair. Empty: every page programs in `program_ns`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub program_ns_by_page_kind: Vec<u64>,
    /// Which page index is of which kind (default `cyclic`, as described
    /// above; `wordline`: the real parts' program order, see
    /// [`PageKindOrder`]). Only with page kinds.
    #[serde(default, skip_serializing_if = "PageKindOrder::is_cyclic")]
    pub page_kind_order: PageKindOrder,
    /// Array read time of each page kind (as many as
    /// `program_ns_by_page_kind`): sensing a lower page compares the cell
    /// with one reference voltage, an upper page with more (MQSim's
    /// `Page_Read_Latency_LSB/CSB/MSB`; FEMU's Micron L95B MLC: lower 48 us,
    /// upper 64 us). Scaled to `read_ns`'s mean where that is given, as the
    /// program kinds are. Used where the read names its physical page (the
    /// page FTL's host and GC reads); other reads (block-mapped FTLs,
    /// mapping pages, copy-back sources) take `read_ns`. Empty: off.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_ns_by_page_kind: Vec<u64>,
    /// Program time spread: each program takes its time x (1 + s x u), u
    /// uniform in [-1, 1], drawn from the die's own seeded stream (0: off).
    /// Program time is an iterative program-and-verify loop whose number of
    /// steps varies from page to page (Grupp et al. 2009: performance "varies
    /// significantly between vendors, devices, and from publicly available
    /// datasheets").
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub program_spread: f64,
    /// Erase time spread, as `program_spread` (0: off).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub erase_spread: f64,
    /// Probability that a flash read (and then each retry) fails ECC and
    /// needs one more sensing step with shifted read reference voltages
    /// (read retry; Cai et al., DATE 2013 / ICCD 2013 used the read-retry
    /// mechanism of 2Y-nm MLC chips). At most `read_retry_max` retries. 0: off.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub read_retry_probability: f64,
    /// Die time of one retry (unset: `read_ns`, one more array sensing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_retry_ns: Option<u64>,
    /// Most retries one read takes.
    #[serde(default = "read_retry_max", skip_serializing_if = "is_read_retry_max")]
    pub read_retry_max: u32,
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}
fn read_retry_max() -> u32 {
    4
}
fn is_read_retry_max(v: &u32) -> bool {
    *v == read_retry_max()
}

fn is_false(b: &bool) -> bool {
    !*b
}
fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}
fn is_true(b: &bool) -> bool {
    *b
}
fn multi_plane_ns() -> u64 {
    1_000
}
fn is_multi_plane_ns(v: &u64) -> bool {
    *v == multi_plane_ns()
}

/// The host interface.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Informational (`sata-3g`, `nvme-pcie3x4`).
    #[serde(default)]
    pub interface: String,
    /// Link transfer rate, decimal MB/s.
    pub mb_per_s: f64,
    /// Controller/firmware time per command.
    pub command_overhead_ns: u64,
    /// Commands the device accepts at once: the interface's command tags
    /// (SATA NCQ 32, AHCI legacy/IDE mode and USB mass storage 1, an NVMe
    /// queue's entries). How many of them it works on at once is what its
    /// controller and flash allow (`controller_cores`, the dies and channels).
    pub queue_depth: u32,
    /// Command processing on the device's controller (issue 30 item 10, "NCQ
    /// as a mechanism, not a cap"): `n` cores each process one command at a
    /// time, for `command_overhead_ns`, in the order the commands arrive; a
    /// queued command's flash work and transfers start once its processing
    /// has ended, and overlap other commands' processing. So queueing hides
    /// the per-command overhead behind other commands' flash time, and the
    /// queue-depth curve saturates at `n / command_overhead_ns` commands per
    /// second, or earlier where the dies, channels or link bind. Hudlet &
    /// Schall section 6: "To minimize communication overhead, higher queue
    /// depths in combination with NCQ can also be used to send bulk requests
    /// to the drive [Gas08]. This reduces the overhead to 1/bulk_size of the
    /// original overhead."; Wang et al. section 2.2.2: "The overall
    /// performance is affected by complex of various design factors such as
    /// flash chips' performance characteristics, internal channel
    /// latency/bandwidth, controller processing power, ...". `0` (the
    /// default): no controller limit, every command in a slot is processed
    /// at once (each slot its own controller; the model before this field).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub controller_cores: u32,
    /// Whether the link moves data both ways at once (`full`: PCIe/NVMe, with
    /// independent host-to-device and device-to-host directions) or one way at
    /// a time (`half`: SATA, IDE, USB). Unset: `full` for an `interface`
    /// starting with `nvme`, `pcie` or `iscsi`, else `half`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplex: Option<Duplex>,
    /// A read's data starts crossing the link as soon as its first page is
    /// in the controller and streams behind the flash (cut-through), instead
    /// of after its last page: a large read costs max(flash, link) rather
    /// than flash + link. Chen et al.'s SSD-M/SSD-H read 256 KiB at over
    /// 240 MB/s (Figure 1), more than their flash bus and SATA link give one
    /// after the other (docs/sim.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_through: bool,
    /// A write's pages go on to the flash bus as they arrive over the link
    /// (cut-through), instead of after the whole request has crossed it
    /// (store-and-forward): a page's bus transfer starts once its first
    /// bytes are in and ends no earlier than its last byte's arrival. A
    /// controller whose only buffer is smaller than a request cannot hold
    /// the request before forwarding it: Chen et al. 5.4, "SSD-L has no
    /// external RAM buffer, instead, it only has a 16KB buffer in the
    /// controller", and 5.3, "As the data has to be transferred to the
    /// register through the serial bus, each write would cause a latency of
    /// around 140-160 $\mu$ s". No effect on a device whose cache copies
    /// writes into DRAM (`cache.dram_mb_per_s`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub write_cut_through: bool,
}

/// Host-link duplex (see [`HostConfig::duplex`]).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Duplex {
    Full,
    Half,
}

impl HostConfig {
    /// The duplex in effect (explicit, else derived from `interface`).
    pub fn effective_duplex(&self) -> Duplex {
        self.duplex.unwrap_or_else(|| {
            let i = self.interface.to_ascii_lowercase();
            if i.starts_with("nvme") || i.starts_with("pcie") || i.starts_with("iscsi") {
                Duplex::Full
            } else {
                Duplex::Half
            }
        })
    }
}

/// Which die operations a host read may suspend (`sched.suspend`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SuspendKind {
    Off,
    Erase,
    ProgramErase,
}

/// What a read of a never-written (or trimmed) page costs (`sched.unmapped_read`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum UnmappedRead {
    /// Only the controller (command overhead and host transfer): the FTL answers zeros.
    Controller,
    /// A flash page read on the die the page would stripe to (what MQSim charges).
    Flash,
}

/// How dies schedule the work queued on them (docs/sim.md, "Scheduling").
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SchedConfig {
    /// Host reads go ahead of programs, erases and GC copies queued on their die
    /// (they wait only for the operation in progress, a GC copy being one page).
    #[serde(default = "yes")]
    pub read_priority: bool,
    /// With read priority: which operation in progress a host read may suspend.
    #[serde(default = "suspend_off")]
    pub suspend: SuspendKind,
    /// Time to suspend a program in progress (the read starts this long after it arrives).
    #[serde(default = "suspend_program_ns")]
    pub suspend_program_ns: u64,
    /// Time to suspend an erase in progress.
    #[serde(default = "suspend_erase_ns")]
    pub suspend_erase_ns: u64,
    #[serde(default = "unmapped_controller")]
    pub unmapped_read: UnmappedRead,
    /// A channel transfer may use an idle gap before transfers placed earlier
    /// (a controller with a command queue per die). `false`: each channel runs
    /// its transfers in the order they were placed (a simple controller with
    /// one in-order queue per channel, e.g. a USB stick's; reads are then first
    /// come, first served whatever `read_priority` says).
    #[serde(default = "yes")]
    pub channel_backfill: bool,
}

impl Default for SchedConfig {
    fn default() -> Self {
        SchedConfig {
            read_priority: true,
            suspend: SuspendKind::Off,
            suspend_program_ns: suspend_program_ns(),
            suspend_erase_ns: suspend_erase_ns(),
            unmapped_read: UnmappedRead::Controller,
            channel_backfill: true,
        }
    }
}

fn suspend_off() -> SuspendKind {
    SuspendKind::Off
}
fn suspend_program_ns() -> u64 {
    20_000
}
fn suspend_erase_ns() -> u64 {
    20_000
}
fn unmapped_controller() -> UnmappedRead {
    UnmappedRead::Controller
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum FtlKind {
    /// Page-level mapping, log-structured allocation striped over dies.
    #[default]
    Page,
    /// Block-level mapping: an update below a block's write pointer rewrites the block.
    Block,
    /// Hybrid log-block FTL, BAST-like: each log block bound to one data block.
    Bast,
    /// Hybrid log-block FTL, FAST-like: fully associative log blocks plus a sequential log block.
    Fast,
    /// DFTL: page map on flash in translation pages, cached mapping table in RAM.
    Dftl,
    /// Budilovsky et al.'s two-level small-chunk map with host-assisted hints.
    TwoLevel,
}

impl FtlKind {
    pub fn name(self) -> &'static str {
        match self {
            FtlKind::Page => "page",
            FtlKind::Block => "block",
            FtlKind::Bast => "bast",
            FtlKind::Fast => "fast",
            FtlKind::Dftl => "dftl",
            FtlKind::TwoLevel => "two-level",
        }
    }
}

/// Which die group a block-mapped FTL's unit lives in (`ftl.unit_groups`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum UnitGroups {
    /// The group with the most free superblocks when the unit is first
    /// written; its merges stay in the group of its data block.
    #[default]
    Free,
    /// Unit u in group u mod G (RAID-0 over die groups, one unit per stripe).
    Interleaved,
    /// Group g serves units [g x U / G, (g + 1) x U / G): contiguous address ranges.
    Contiguous,
}

impl UnitGroups {
    pub fn name(self) -> &'static str {
        match self {
            UnitGroups::Free => "free",
            UnitGroups::Interleaved => "interleaved",
            UnitGroups::Contiguous => "contiguous",
        }
    }
}

/// Where the page-mapped FTLs (`page`, `dftl`, `two-level`) put a host
/// write (`ftl.allocation`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PageAllocation {
    /// Dynamic: each written page goes to the next die in turn (round-robin
    /// over the dies in write order, channels first), whatever its address.
    #[default]
    RoundRobin,
    /// Static by address, MQSim's `CWDP` plane allocation scheme
    /// (CMU-SAFARI/MQSim, `Plane_Allocation_Scheme` in its shipped
    /// ssdconfig.xml; `Address_Mapping_Unit_Page_Level::
    /// allocate_plane_for_user_write`): logical page `lpn` goes to channel
    /// `lpn mod C`, chip (way) `(lpn / C) mod W`, die `(lpn / (C x W)) mod
    /// D`, plane `(lpn / (C x W x D)) mod P`; only the page inside that plane
    /// is chosen at write time. Here unit `u` is on channel `u mod C`, so
    /// the die is unit `lpn mod (C x W x D)`. The plane is not taken from
    /// the address: without `nand.multi_plane` a die's blocks are one pool,
    /// with it the die's planes still take its writes in turn. A page's
    /// rewrites all land on one die, so writes to busy dies queue there
    /// instead of moving on to idle ones.
    StaticCwdp,
}

impl PageAllocation {
    pub fn name(self) -> &'static str {
        match self {
            PageAllocation::RoundRobin => "round-robin",
            PageAllocation::StaticCwdp => "static-cwdp",
        }
    }

    fn is_round_robin(&self) -> bool {
        *self == PageAllocation::RoundRobin
    }
}

/// The FTL and its parameters (see docs/sim-ftl.md). Parameters that do not
/// apply to the chosen `kind` are ignored.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    #[serde(default)]
    pub kind: FtlKind,
    /// bast, fast: number of log blocks (each a superblock: one block on every die).
    #[serde(default = "eight")]
    pub log_blocks: u32,
    /// block, bast, fast: dies a superblock spans (0 = all dies). Must divide the number of dies.
    #[serde(default)]
    pub stripe_dies: u32,
    /// bast, fast: pages a random log block takes before it counts as full and is
    /// merged (0 = the whole superblock). Low-end controllers log into one
    /// physical block while their data units span several (docs/sim-ftl.md).
    #[serde(default)]
    pub log_pages: u32,
    /// bast: a log block holds one copy of each page; rewriting a page already
    /// in the unit's log merges the unit first (controllers that find a page's
    /// copy by its position, without version numbers; docs/sim-ftl.md).
    #[serde(default)]
    pub log_overwrite_merges: bool,
    /// bast: a random log is a positional replacement for one aligned window
    /// of `log_pages` pages of its unit (each page at its own offset in the
    /// window, as NFTL's replacement blocks keep a page at its own offset;
    /// Gal & Toledo, ACM Computing Surveys 2005): it takes pages of that
    /// window only, and a write elsewhere in the unit merges the unit first
    /// (docs/sim-ftl.md). No effect with `log_pages = 0`.
    #[serde(default)]
    pub log_window: bool,
    /// bast: at most this many logs are *open sequential logs* (written in
    /// order from offset 0 and not yet full) at once; 0 = no limit (BAST). A
    /// log opened while the limit is reached is a random log from its first
    /// page: FAST keeps one sequential log block (Lee et al., ACM TECS 2007),
    /// so concurrent sequential streams beyond it are logged like random
    /// writes (docs/sim-ftl.md).
    #[serde(default)]
    pub seq_log_limit: u32,
    /// Any FTL: the controller's mapping granule, a multiple of the page
    /// (0 = one page). A write that covers a granule only in part is
    /// read-modify-written: the granule's other pages that hold data are
    /// read and programmed again with the write, so a write misaligned to
    /// the granule moves more pages than it carries. uFLIP (Bouganim et al.
    /// 2009) section 3, Granularity: "The flash translation layer manages a
    /// direct map between blocks and flash pages, but the granularity at
    /// which this mapping takes place is not documented"; section 5.2:
    /// "Unaligned IO requests result in significant performance
    /// degradation for some devices. For instance, on the Samsung SSD,
    /// random IOs should be aligned to 16 KB, as otherwise the response
    /// time increases from 18 msec to 32 msec." (docs/sim.md)
    #[serde(default = "zero_bytes", skip_serializing_if = "is_zero_bytes")]
    pub map_granule: ByteSize,
    /// block, bast, fast: which die group holds a unit's superblocks
    /// (`free`: the group with the most free superblocks when the unit is
    /// first written, then wherever its data block is; `interleaved`: unit u
    /// in group u mod G, RAID-0 with one unit per stripe; `contiguous`: each
    /// group serves one contiguous G-th of the logical space). With a fixed
    /// group, writes that stay in one group's addresses queue their merges on
    /// its dies while writes spread over the groups overlap them
    /// (docs/sim-ftl.md).
    #[serde(default)]
    pub unit_groups: UnitGroups,
    /// page, dftl, two-level: which die a host write goes to (`round-robin`,
    /// the default, or `static-cwdp`: by its logical page number, as MQSim's
    /// static allocation does; see [`PageAllocation`]). Mapping pages of the
    /// map-on-flash FTLs stay round-robin.
    #[serde(default, skip_serializing_if = "PageAllocation::is_round_robin")]
    pub allocation: PageAllocation,
    /// fast: at most this many units may have pages in the random log blocks
    /// (0 = any number); a random write to another unit first merges the least
    /// recently written one (a bounded association table, as KAST bounds each
    /// log block's associativity; docs/sim-ftl.md).
    #[serde(default)]
    pub log_units: u32,
    /// fast: sequential log blocks, each owned by one unit (1 = FAST's single
    /// sequential log). A write at offset 0 of a unit opens one, merging the
    /// least recently written when all are taken (several sequential logs as in
    /// LAST, Lee et al., SIGOPS OSR 2008; docs/sim-ftl.md). Capped by the
    /// spare superblocks left after data, random logs and merge targets.
    #[serde(default = "one")]
    pub seq_logs: u32,
    /// fast: LAST's request-size locality detector (Lee et al. 2008): the pages
    /// of a write request of more than one page go to a sequential log even
    /// when they do not start at offset 0 of their unit (the log is opened with
    /// the unit's pages below them copied first), so sequential streams that
    /// start mid-unit get sequential logs (docs/sim-ftl.md).
    #[serde(default)]
    pub seq_large_requests: bool,
    /// fast: 0 = a full set of random logs is reclaimed at once (every unit
    /// with a page in the oldest log merged inside one write, as in FAST);
    /// k > 0 = incremental reclaim: the oldest log is set aside and every later
    /// random write first merges up to k of its units (docs/sim-ftl.md).
    #[serde(default)]
    pub merges_per_write: u32,
    /// fast: a random log block none of whose pages is valid any more (all
    /// overwritten later, or superseded by a sequential log or a merge) is
    /// erased and returned to the free pool after the write that invalidated
    /// its last page, with no merge, instead of keeping its write pointer
    /// until it is full. Chen et al. 2009 section 2.2: "Each write of a page
    /// just needs to invalidate the previously occupied physical page by
    /// updating the metadata ... the valid pages need to be merged together
    /// with the updated pages in the same block": a log block without valid
    /// pages has nothing to merge, only its erase (docs/sim-ftl.md).
    #[serde(default)]
    pub erase_dead_logs: bool,
    /// dftl: the cached mapping table (8 bytes per entry); two-level: the controller's
    /// chunk cache (chunk_entries x 4 bytes per chunk).
    #[serde(default = "map_cache")]
    pub map_cache: ByteSize,
    /// two-level: map entries per chunk (c). 0 = one flash page of entries (DFTL-like chunks).
    #[serde(default = "chunk_entries")]
    pub chunk_entries: u32,
    /// two-level: the host-assisted hints.
    #[serde(default)]
    pub hints: HintsConfig,
    /// Any FTL: periodic metadata synchronisation (Chen et al. 5.7).
    #[serde(default)]
    pub sync: SyncConfig,
    /// Start with every logical page written once, in order (the papers' sequential
    /// fill before each experiment), at no simulated time; statistics start at zero.
    #[serde(default)]
    pub prefill: bool,
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            kind: FtlKind::Page,
            log_blocks: eight(),
            stripe_dies: 0,
            log_pages: 0,
            log_overwrite_merges: false,
            log_window: false,
            seq_log_limit: 0,
            map_granule: ByteSize(0),
            unit_groups: UnitGroups::Free,
            allocation: PageAllocation::RoundRobin,
            log_units: 0,
            seq_logs: 1,
            seq_large_requests: false,
            merges_per_write: 0,
            erase_dead_logs: false,
            map_cache: map_cache(),
            chunk_entries: chunk_entries(),
            hints: HintsConfig::default(),
            sync: SyncConfig::default(),
            prefill: false,
        }
    }
}

/// Budilovsky et al.'s host-assisted hints. The hint cache is the *host's* cache
/// of mapping chunks (the SSD pushes every chunk it reads or modifies to the host;
/// the host attaches the chunks covering a request to it). It is modelled inside
/// the simulator because hints travel with requests and the Device interface has
/// no hint channel. A hint is used only when its version is current.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct HintsConfig {
    #[serde(default)]
    pub enabled: bool,
    /// Chunks the host caches (LRU); 0 = the whole map.
    #[serde(default)]
    pub host_chunks: u64,
}

/// Metadata synchronisation (Chen et al. section 5.7): the map's dirty pages are
/// flushed to flash periodically; with `blocking`, the map is locked during the
/// flush, so every later flash operation waits for it (latency spikes).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SyncConfig {
    #[serde(default)]
    pub enabled: bool,
    /// Flush after this many host page writes (0: only on `dirty_limit`).
    #[serde(default = "sync_interval")]
    pub interval_writes: u64,
    /// Also flush when this many map pages are dirty (0: no limit).
    #[serde(default)]
    pub dirty_limit: u32,
    /// Map entries per metadata page (0 = page_bytes / 4).
    #[serde(default)]
    pub entries_per_page: u32,
    /// Pages written per flush on top of the dirty map pages (root / commit record).
    #[serde(default = "one")]
    pub extra_pages: u32,
    /// The flush locks the map: all later flash operations wait for it.
    #[serde(default = "yes")]
    pub blocking: bool,
    /// `interval_writes` counts host write requests instead of page writes
    /// (Chen et al. 5.3 see SSD-L's spike "every 64 requests").
    #[serde(default)]
    pub per_request: bool,
    /// A host write request that does not continue the previous one (a
    /// single-page write whose first page is not the page after the previous
    /// write's last; a multi-page write is taken as sequential, as LAST's
    /// request-size detector does) flushes its map update before it
    /// completes. Chen et al. 5.7: "With limited buffer space, SSD-L has to
    /// frequently lock the in-memory data structure and flush the metadata in
    /// volatile cache to persistent flash memory"; 5.5: SSD-L detects "a
    /// sequential write pattern by recording the previous write request's
    /// LBN".
    #[serde(default)]
    pub flush_non_sequential: bool,
}

impl Default for SyncConfig {
    fn default() -> Self {
        SyncConfig {
            enabled: false,
            interval_writes: sync_interval(),
            dirty_limit: 0,
            entries_per_page: 0,
            extra_pages: 1,
            blocking: true,
            per_request: false,
            flush_non_sequential: false,
        }
    }
}

/// Victim selection policy of the garbage collector.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// Fewest valid pages first.
    #[default]
    Greedy,
    /// Kawaguchi et al.: maximise age x (1 - u) / 2u.
    CostBenefit,
    /// Oldest closed block first.
    Fifo,
}

impl GcPolicy {
    pub fn name(self) -> &'static str {
        match self {
            GcPolicy::Greedy => "greedy",
            GcPolicy::CostBenefit => "cost-benefit",
            GcPolicy::Fifo => "fifo",
        }
    }
}

/// Garbage collection: policy, watermarks (free blocks per die) and idle-time cleaning.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GcConfig {
    #[serde(default)]
    pub policy: GcPolicy,
    /// Free blocks per die that only the garbage collector may take.
    #[serde(default = "one")]
    pub reserve_blocks: u32,
    /// Foreground GC runs when a die's free blocks fall below this.
    #[serde(default = "two")]
    pub fg_low_watermark: u32,
    /// Idle-time (background) GC on/off.
    #[serde(default)]
    pub background: bool,
    /// Lazy, incremental foreground cleaning (page FTL): once a die's free
    /// blocks are below `fg_low_watermark`, every host write to the die first
    /// relocates its share of the current victim's valid pages, paced so the
    /// victim is empty (and erased) when the die's open host block is full,
    /// instead of the write that opens the next block reclaiming a whole
    /// victim. Chen et al. 2009 section 5.8 on SSD-M: "SSD-M may take a
    /// 'lazy' cleaning policy. This causes each write to clean and recycle
    /// invalidated pages synchronously." Off: the whole-victim behaviour.
    #[serde(default)]
    pub incremental: bool,
    /// With `incremental`: the cleaning step is part of the host write, not
    /// of its write-back. The write that makes a step is acknowledged only
    /// once the step's share of the victim's valid pages has been read out
    /// to the controller (each page's array read and its transfer, Table 1's
    /// read time and section 5.2's 100 us on the flash bus); the reads go
    /// next on the die, ahead of its queued write-backs, like a host read
    /// (`sched.read_priority`; without it they queue), and the pages are then
    /// programmed from the controller's buffer behind that work. Chen et al. 2009 section 5.8: "This
    /// causes each write to clean and recycle invalidated pages
    /// synchronously. Meanwhile, since most flash memory blocks are
    /// significantly fragmented by random writes, each write becomes
    /// excessively expensive." Off: the step is done by the write-back, and
    /// a cached write waits for it only through a full cache. Inert without
    /// `incremental`.
    #[serde(default)]
    pub incremental_synchronous: bool,
    /// Background GC cleans a die until it has this many free blocks.
    #[serde(default = "eight")]
    pub bg_high_watermark: u32,
    /// The device must have been idle this long before background GC starts.
    #[serde(default = "one_ms")]
    pub idle_threshold_ns: u64,
}

impl Default for GcConfig {
    fn default() -> Self {
        GcConfig {
            policy: GcPolicy::Greedy,
            reserve_blocks: 1,
            fg_low_watermark: 2,
            background: false,
            incremental: false,
            incremental_synchronous: false,
            bg_high_watermark: 8,
            idle_threshold_ns: 1_000_000,
        }
    }
}

/// Wear levelling: erase-count-aware allocation and static wear levelling.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WearConfig {
    /// Allocate the free block with the fewest erases (else oldest-freed first).
    #[serde(default = "yes")]
    pub aware_allocation: bool,
    /// Static WL: move the coldest block's data when max - min erase count on a die exceeds this (0 = off).
    #[serde(default = "wl_threshold")]
    pub static_threshold: u32,
    /// Erases on a die between two static-WL checks.
    #[serde(default = "wl_interval")]
    pub check_interval: u32,
}

impl Default for WearConfig {
    fn default() -> Self {
        WearConfig {
            aware_allocation: true,
            static_threshold: wl_threshold(),
            check_interval: wl_interval(),
        }
    }
}

/// DRAM write-back cache.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    #[serde(default)]
    pub enabled: bool,
    #[serde(default = "cache_size")]
    pub size: ByteSize,
    /// Reads of a page still dirty in the cache are served from DRAM
    /// (false: they wait for its write-back, as Chen et al. observed on SSD-M, section 5.5).
    #[serde(default = "yes")]
    pub serve_reads: bool,
    /// A rewrite of a page still dirty in the cache, whose write-back has not
    /// started programming, updates the cached copy instead of programming again.
    /// Off by default: with the FTLs' round-robin die allocation, a die backlogged
    /// by GC absorbs more rewrites, so fewer of its pages are invalidated while it
    /// keeps receiving new ones, until its GC stalls (sustained random writes on
    /// nvme-tlc did). Turn it on for short or cache-sized workloads only.
    #[serde(default)]
    pub absorb_rewrites: bool,
    /// Only a write that continues the previous write (its first page follows
    /// the previous write's last) enters the buffer; any other write is
    /// programmed before it completes. Chen et al.'s SSD-L buffers sequential
    /// writes only and "seems to detect a sequential write pattern by
    /// recording the previous write request’s LBN" (sections 5.3, 5.5).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sequential_only: bool,
    /// With the write-back cache off (`enabled = false`; no effect with it
    /// on, where `absorb_rewrites` plays this role): the controller holds
    /// the last write's data in its buffer until a write to other pages
    /// displaces it, and a write to exactly the same pages replaces the held
    /// data instead of being programmed. Nothing is written back
    /// asynchronously (a displaced write is programmed before the write that
    /// displaced it completes), so pauses do not help. uFLIP (Bouganim et
    /// al. 2009) section 5.2 on Table 3's in-place column (Incr = 0, one
    /// block rewritten): "the effect of the in-place pattern, in particular,
    /// varies significantly between devices, ranging from time savings of
    /// about 40% for the Samsung SSD"; a rewrite cheaper than a sequential
    /// write, which programs with no merge, cannot be programmed at all
    /// (docs/sim.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hold_last_write: bool,
    /// A buffered page is acknowledged once it has crossed the flash channel
    /// into its die's register (the buffer is the planes' page registers, as
    /// Chen et al. suspect of SSD-L: "each write would cause a latency of
    /// around 140-160 us", section 5.3), not when it reaches controller DRAM.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ack_after_channel: bool,
    /// With `ack_after_channel` (no effect without it): the data waits in its register, and the
    /// controller programs the registers when a read command arrives, which
    /// waits for that program: Chen et al. 5.5 on SSD-L, "We believe that this
    /// is because writes just transfer data to the flash memory plane
    /// registers, and reads trigger the programming process and cause a
    /// synchronous delay (800 $\mu$ s)." The read starts a command and a
    /// program after it arrives, however long after the writes (5.5:
    /// "inserting a delay would not improve performance"). The programs'
    /// die time stays placed when the writes were (flash work is placed when
    /// it is known), so only the read's wait moves.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub program_on_read: bool,
    /// With `ack_after_channel` (no effect without it): the registers are
    /// programmed together once every one of them holds a buffered page
    /// (the cache's `size` in pages), and a page or command that needs a
    /// register meanwhile (the next write's page, a read, a direct write)
    /// waits for that program: command + array program after the last
    /// register's page is in. Chen et al. 5.3 on SSD-L: "When the registers
    /// are full, a page program confirm command is issued to initiate the
    /// programming process and data can be written into flash memory in
    /// parallel, which results in the observed high spikes." Off, each
    /// page's program starts once its transfer ends and the registers never
    /// make a request wait. A read that programs the registers
    /// (`program_on_read`) empties them too. As with `program_on_read`, the
    /// programs' die time stays placed when the writes were; only the
    /// waits move. Only one-page writes count towards filling the
    /// registers: the controller holds a page back because it cannot know
    /// whether a sequential write will follow (5.3: "If write requests are
    /// coming sequentially, data can be temporarily held in the buffer"),
    /// while a multi-page request announces its pages, which program as they
    /// arrive. Table 1's timings require this of Figure 1: waiting for all 32
    /// registers to fill (32 pages over the profile's 4 channels, 800 us of
    /// bus) and then for their 800 us program moves at most 128 KiB per
    /// 1.6 ms, 82 MB/s, below the 88 MB/s Chen et al. measured for 256 KiB
    /// writes (section 4; the simulator gave 54.9 MB/s with every page
    /// counted).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub program_when_full: bool,
    /// A read waits until every page dirty in the write-back cache when it
    /// arrives has been written back: the controller flushes its buffer
    /// before it serves a read (the write-backs stay where the writes placed
    /// them on the dies; only the read's start moves). The DRAM-cache form
    /// of Chen et al. 5.5's SSD-L, where "reads trigger the programming
    /// process and cause a synchronous delay (800 $\mu$ s)"; on a log-block
    /// drive the write-back of a random write is a merge, so a read in a
    /// random mix at one outstanding IO costs about what the write before it
    /// costs. Wang et al. 2011, section 2.2.2, on the Mtron and OCZ drives:
    /// "We had expected that the mixed-access throughput would fall between
    /// the read throughput and the write throughput, but the observation was
    /// that the mixed-access throughput was comparable with the write
    /// throughput. ... this characteristic is sometimes called bathtub
    /// effect[16]"; section 2.2.3: "Random 50% Read 50% Write This pattern
    /// is close to Random Write." No effect with the cache off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flush_on_read: bool,
    /// Writes larger than this bypass the cache and complete when programmed
    /// (0: every write is cached). Wang et al. saw the Intel X25-E's write
    /// throughput fall above 32 KiB requests (Figure 1c) while small writes
    /// ran at link speed: large writes streamed to flash, small ones cached.
    #[serde(default = "zero_bytes", skip_serializing_if = "is_zero_bytes")]
    pub bypass_above: ByteSize,
    /// Write-back back-pressure: at most this much cached data is being
    /// written back to flash at once (placed on the dies, not yet
    /// programmed). A page entering the cache while the window is full waits
    /// for the earliest write-back in flight to end, though the cache itself
    /// has room, so writes slow down when the flash falls behind, before the
    /// cache is full. MQSim's cache manager (CMU-SAFARI/MQSim,
    /// `Data_Cache_Manager_Flash_Advanced`) holds a user write back once the
    /// sectors it has sent to flash and not yet seen programmed reach its
    /// back-pressure depth, which `SSD_Device` sets to one page per plane of
    /// the device. 0: only `size` limits the write-backs in flight.
    #[serde(default = "zero_bytes", skip_serializing_if = "is_zero_bytes")]
    pub writeback_window: ByteSize,
    /// The cache manager's DRAM bandwidth, MB/s (0: the copy into DRAM is
    /// free). A write's data is copied into the DRAM after it has crossed the
    /// host link, one copy at a time (one DRAM channel), taking
    /// `dram_access_ns + bytes / dram_mb_per_s`; the write is acknowledged
    /// when its copy has ended. MQSim charges each user write one DRAM access
    /// of its size the same way, on one DRAM request queue.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub dram_mb_per_s: f64,
    /// Fixed time of one DRAM access (row activation and column latency,
    /// tRCD + tCL), with `dram_mb_per_s`.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub dram_access_ns: u64,
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

fn is_zero_bytes(b: &ByteSize) -> bool {
    b.0 == 0
}

fn zero_bytes() -> ByteSize {
    ByteSize(0)
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            enabled: false,
            size: cache_size(),
            serve_reads: true,
            absorb_rewrites: false,
            sequential_only: false,
            hold_last_write: false,
            ack_after_channel: false,
            program_on_read: false,
            program_when_full: false,
            flush_on_read: false,
            bypass_above: ByteSize(0),
            writeback_window: ByteSize(0),
            dram_mb_per_s: 0.0,
            dram_access_ns: 0,
        }
    }
}

/// Internal reorganisation the controller runs while the host writes: on a
/// timer, and after TRIM. Hudlet & Schall (BTW 2011), section 6: "Figure 4
/// visualizes the write performance of SSD3 in pages/second on a per-second
/// basis. As illustrated, every 4 to 5 seconds, performance is heavily
/// degraded for about 3 seconds. We conclude, the drive is performing
/// internal re-organization like freeing up flash blocks or searching for
/// another writable block." and, after TRIM (Figure 5): "In this graph, a
/// heavily degraded performance in the first half of the measurement is
/// evident. Apparently, the SSD tries to free up flash blocks while we were
/// simultaneously applying a write load to it."
///
/// The work is flash work: block erases placed on the dies in turn, paced so
/// that it takes `die_share` of every die's time while it runs, so host
/// programs queue behind it (src/reorg.rs). It runs only while writes keep
/// arriving (a gap longer than `sustained_gap_ns` ends the load: the timer
/// restarts with the next write, and post-TRIM cleaning waits for it).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReorgConfig {
    /// Time between the starts of two timed reorganisations under sustained
    /// writes (0: no timed reorganisation).
    #[serde(default)]
    pub interval_ns: u64,
    /// How long each timed reorganisation lasts (less than `interval_ns`).
    #[serde(default)]
    pub duration_ns: u64,
    /// Fraction of each die's time the reorganisation (or post-TRIM
    /// cleaning) takes while it runs, in (0, 1).
    #[serde(default = "half")]
    pub die_share: f64,
    /// After TRIM, one block erase is owed per block's worth of trimmed
    /// pages that held data, worked off at `die_share` while writes arrive.
    #[serde(default)]
    pub trim_cleaning: bool,
    /// A timed reorganisation frees the trimmed blocks first: its erases pay
    /// the post-TRIM debt while one is owed, so the cleaning goes on through
    /// the windows instead of pausing in them (false: the window's erases
    /// are extra work and the debt waits for the window to end). Hudlet &
    /// Schall describe one activity under two loads: the timed drops are
    /// the drive "freeing up flash blocks or searching for another writable
    /// block" (section 6, Figure 4), and after TRIM "the SSD tries to free
    /// up flash blocks while we were simultaneously applying a write load to
    /// it" (Figure 5); a drive owing trimmed blocks has blocks to free that
    /// need no copying, and frees those.
    #[serde(default)]
    pub timed_frees_trimmed: bool,
    /// The longest gap between two host writes that still counts as
    /// sustained writing.
    #[serde(default = "one_second_ns")]
    pub sustained_gap_ns: u64,
}

fn half() -> f64 {
    0.5
}

fn one_second_ns() -> u64 {
    1_000_000_000
}

impl Default for ReorgConfig {
    fn default() -> Self {
        ReorgConfig {
            interval_ns: 0,
            duration_ns: 0,
            die_share: half(),
            trim_cleaning: false,
            timed_frees_trimmed: false,
            sustained_gap_ns: one_second_ns(),
        }
    }
}

impl ReorgConfig {
    /// Neither timed reorganisation nor post-TRIM cleaning.
    pub fn is_off(&self) -> bool {
        self.interval_ns == 0 && !self.trim_cleaning
    }
}

/// Read-ahead after a detected sequential read stream.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReadaheadConfig {
    #[serde(default)]
    pub enabled: bool,
    /// Consecutive sequential read requests before read-ahead starts.
    #[serde(default = "four")]
    pub trigger: u32,
    /// How far ahead of the stream to prefetch.
    #[serde(default = "ra_window")]
    pub window: ByteSize,
    /// Read-ahead follows physical addresses, so a page that garbage
    /// collection (or wear levelling) relocated breaks the stream: it was
    /// copied into a GC block in its victim's order, not where the host's
    /// striped write put it. Off: any page on the next die counts as found
    /// (a relocation inside a die keeps its die). Chen et al. 2009 section
    /// 5.8: "Second, since logically continuous pages are not physically
    /// continuous to each other, the readahead mechanism would not be
    /// effective any more, which impacts read performance." (page FTL)
    #[serde(default)]
    pub relocation_breaks_stripe: bool,
}

impl Default for ReadaheadConfig {
    fn default() -> Self {
        ReadaheadConfig {
            enabled: false,
            trigger: 4,
            window: ra_window(),
            relocation_breaks_stripe: false,
        }
    }
}

/// Invariant checking.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CheckConfig {
    /// Verify the maps after every garbage collection (slow: O(device) per GC).
    #[serde(default)]
    pub enabled: bool,
    /// A request whose latency would exceed this is reported as a stall (DeviceError::Invariant).
    #[serde(default = "stall_ns")]
    pub stall_ns: u64,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            enabled: false,
            stall_ns: stall_ns(),
        }
    }
}

fn yes() -> bool {
    true
}
fn one() -> u32 {
    1
}
fn two() -> u32 {
    2
}
fn four() -> u32 {
    4
}
fn eight() -> u32 {
    8
}
fn one_ms() -> u64 {
    1_000_000
}
fn wl_threshold() -> u32 {
    0
}
fn wl_interval() -> u32 {
    64
}
fn cache_size() -> ByteSize {
    ByteSize(8 << 20)
}
fn ra_window() -> ByteSize {
    ByteSize(128 << 10)
}
fn stall_ns() -> u64 {
    60_000_000_000
}
fn map_cache() -> ByteSize {
    ByteSize(64 << 10)
}
fn chunk_entries() -> u32 {
    64
}
fn sync_interval() -> u64 {
    1024
}

/// Short names accepted in overrides, mapped to their dotted TOML path.
const ALIASES: &[(&str, &str)] = &[
    ("capacity", "geometry.capacity"),
    ("op", "geometry.over_provisioning"),
    ("over_provisioning", "geometry.over_provisioning"),
    ("channels", "geometry.channels"),
    ("pages_per_block", "geometry.pages_per_block"),
    ("page_bytes", "geometry.page_bytes"),
    ("check", "check.enabled"),
    ("stall_ns", "check.stall_ns"),
    ("gc", "gc.policy"),
    ("bg_gc", "gc.background"),
    ("readahead", "readahead.enabled"),
    ("ra", "readahead.enabled"),
    ("qd", "host.queue_depth"),
    ("cell", "nand.cell"),
    ("copyback", "nand.copyback"),
    ("multi_plane", "nand.multi_plane"),
    ("wl", "wear.static_threshold"),
    ("ftl", "ftl.kind"),
    ("log_blocks", "ftl.log_blocks"),
    ("log_pages", "ftl.log_pages"),
    ("log_units", "ftl.log_units"),
    ("unit_groups", "ftl.unit_groups"),
    ("allocation", "ftl.allocation"),
    ("seq_logs", "ftl.seq_logs"),
    ("map_granule", "ftl.map_granule"),
    ("seq_large_requests", "ftl.seq_large_requests"),
    ("merges_per_write", "ftl.merges_per_write"),
    ("erase_dead_logs", "ftl.erase_dead_logs"),
    ("chunk_entries", "ftl.chunk_entries"),
    ("map_cache", "ftl.map_cache"),
    ("hints", "ftl.hints.enabled"),
    ("hint_chunks", "ftl.hints.host_chunks"),
    ("sync", "ftl.sync.enabled"),
    ("prefill", "ftl.prefill"),
    ("duplex", "host.duplex"),
    ("read_priority", "sched.read_priority"),
    ("suspend", "sched.suspend"),
    ("unmapped_read", "sched.unmapped_read"),
];

impl SimConfig {
    /// Parse a TOML profile.
    pub fn from_toml(text: &str, origin: &str) -> Result<SimConfig, ConfigError> {
        let cfg: SimConfig = toml::from_str(text).map_err(|e| ConfigError::ProfileSyntax {
            origin: origin.to_string(),
            message: e.message().replace('\n', " "),
        })?;
        Ok(cfg)
    }

    /// The configuration as TOML (all sections, resolved values where given).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self)
            .unwrap_or_else(|e| format!("# cannot serialise profile: {e}\n"))
    }

    /// Apply one `key=value` override. Keys are dotted TOML paths (`gc.policy`)
    /// or short aliases (`capacity`, `op`, `cache`, `check`, `gc`, `readahead`, `qd`...).
    /// `cache=on|off|SIZE` turns the cache on/off or sets its size.
    pub fn apply_override(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let key = key.trim();
        let value = value.trim();
        if key == "cache" {
            match parse_switch(value) {
                Some(on) => self.cache.enabled = on,
                None => {
                    self.cache.size =
                        ByteSize::parse(value).map_err(|e| ConfigError::CacheOverride {
                            value: value.to_string(),
                            reason: e.to_string(),
                        })?;
                    self.cache.enabled = true;
                }
            }
            return Ok(());
        }
        let path = ALIASES
            .iter()
            .find(|(a, _)| *a == key)
            .map(|(_, p)| *p)
            .unwrap_or(key);
        let mut doc =
            toml::Value::try_from(&*self).map_err(|e| ConfigError::OverrideUnserialisable {
                key: key.to_string(),
                reason: e.to_string(),
            })?;
        let parts: Vec<&str> = path.split('.').collect();
        set_path(&mut doc, &parts, value).ok_or_else(|| ConfigError::UnknownSetting {
            key: key.to_string(),
        })?;
        let cfg: SimConfig =
            doc.try_into()
                .map_err(|e: toml::de::Error| ConfigError::OverrideValue {
                    key: key.to_string(),
                    value: value.to_string(),
                    message: e.message().replace('\n', " "),
                })?;
        *self = cfg;
        Ok(())
    }
}

fn set_path(node: &mut toml::Value, parts: &[&str], value: &str) -> Option<()> {
    let table = node.as_table_mut()?;
    let (first, rest) = parts.split_first()?;
    if rest.is_empty() {
        let new = guess_value(value, table.get(*first));
        table.insert(first.to_string(), new);
        return Some(());
    }
    let child = table
        .entry(first.to_string())
        .or_insert_with(|| toml::Value::Table(Default::default()));
    set_path(child, rest, value)
}

fn parse_switch(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some(true),
        "off" | "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// Turn an override's text into a TOML value shaped like the one it replaces.
fn guess_value(v: &str, old: Option<&toml::Value>) -> toml::Value {
    // A list of integers, `A/B/C` (a spec's overrides are separated by
    // commas): `nand.program_ns_by_page_kind=300000/1500000`.
    // An empty value empties a list (a profile's page kinds off; an empty
    // list is not written, so there may be no old value).
    if v.trim().is_empty() && matches!(old, None | Some(toml::Value::Array(_))) {
        return toml::Value::Array(Vec::new());
    }
    if v.contains('/') || matches!(old, Some(toml::Value::Array(_))) {
        let items: Option<Vec<toml::Value>> = v
            .split('/')
            .map(|x| x.trim().replace('_', "").parse::<i64>().ok())
            .map(|x| x.map(toml::Value::Integer))
            .collect();
        if let Some(items) = items {
            return toml::Value::Array(items);
        }
    }
    match old {
        Some(toml::Value::Boolean(_)) => {
            if let Some(b) = parse_switch(v) {
                return toml::Value::Boolean(b);
            }
        }
        Some(toml::Value::Integer(_)) => {
            if let Ok(i) = v.replace('_', "").parse::<i64>() {
                return toml::Value::Integer(i);
            }
            if let Ok(f) = v.parse::<f64>() {
                if f.fract() == 0.0 {
                    return toml::Value::Integer(f as i64);
                }
            }
        }
        Some(toml::Value::Float(_)) => {
            if let Ok(f) = v.parse::<f64>() {
                return toml::Value::Float(f);
            }
        }
        Some(toml::Value::String(_)) => return toml::Value::String(v.to_string()),
        _ => {}
    }
    if let Some(b) = parse_switch(v) {
        if !v.chars().all(|c| c.is_ascii_digit()) {
            return toml::Value::Boolean(b);
        }
    }
    if let Ok(i) = v.parse::<i64>() {
        return toml::Value::Integer(i);
    }
    if let Ok(f) = v.parse::<f64>() {
        return toml::Value::Float(f);
    }
    toml::Value::String(v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_sizes() {
        assert_eq!(ByteSize::parse("4GiB").unwrap().0, 4 << 30);
        assert_eq!(ByteSize::parse("4 GiB").unwrap().0, 4 << 30);
        assert_eq!(ByteSize::parse("512").unwrap().0, 512);
        assert_eq!(ByteSize::parse("8MB").unwrap().0, 8_000_000);
        assert_eq!(ByteSize::parse("1.5KiB").unwrap().0, 1536);
        // A typed error (the units parser's), whose text a profile or
        // `cache=` override error quotes.
        let err = ByteSize::parse("4XB").unwrap_err();
        assert_eq!(
            err,
            flashlab_pattern::units::UnitError::UnknownSizeUnit {
                text: "4XB".into(),
                unit: "xb".into()
            }
        );
        assert_eq!(
            err.to_string(),
            "'4XB' has an unknown size unit 'xb'; use B, KiB, MiB, GiB, TiB, PiB (powers of 1024) or KB, MB, GB, TB, PB (powers of 1000)"
        );
        assert_eq!(ByteSize(4 << 30).to_string(), "4GiB");
        assert_eq!(ByteSize(1536).to_string(), "1536B");
        // A decimal size prints as written, and reads back to the same bytes.
        assert_eq!(ByteSize::parse("4GB").unwrap().to_string(), "4GB");
        for text in ["4GB", "80GB", "4GiB", "1536", "8MB", "500MB", "0"] {
            let b = ByteSize::parse(text).unwrap();
            assert_eq!(ByteSize::parse(&b.to_string()).unwrap(), b, "{text}");
        }
    }
}
