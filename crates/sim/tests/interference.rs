//! Reads and writes interfering, as Chen, Koufaty & Zhang observed (SIGMETRICS
//! 2009, section 5.5) on SSD-L, whose write buffer is its planes' page
//! registers: "writes just transfer data to the flash memory plane
//! registers, and reads trigger the programming process and cause a
//! synchronous delay (800 $\mu$ s). This also explains the fact that over
//! 80% of the reads in these workloads have a latency of higher than 1ms."

mod common;

use common::*;
use flashlab_device::{Completion, Mode};
use flashlab_sim::{open_device, SimDevice};

fn dev(spec: &str) -> SimDevice {
    open_device(spec, 1, 64).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// Chen's write(n)+read(n): write a 4 KiB page, then read it, sequentially.
fn write_then_read(n: u64) -> Vec<(u64, u32, Mode)> {
    let io = 4 * KIB;
    (0..n)
        .flat_map(|i| {
            [
                (i * io, io as u32, Mode::Write),
                (i * io, io as u32, Mode::Read),
            ]
        })
        .collect()
}

/// Chen's read(n)+write(n+4MB): two sequential streams, 4 MB apart.
fn read_and_write_4mb_apart(n: u64) -> Vec<(u64, u32, Mode)> {
    let io = 4 * KIB;
    (0..n)
        .flat_map(|i| {
            [
                (i * io, io as u32, Mode::Read),
                (4 * MIB + i * io, io as u32, Mode::Write),
            ]
        })
        .collect()
}

fn reads_over_1ms(spec: &str, reqs: &[(u64, u32, Mode)], pause_ns: u64) -> f64 {
    let mut d = dev(spec);
    let done: Vec<Completion> = run_with(&mut d, reqs.iter().copied(), 1, pause_ns);
    let reads: Vec<_> = done
        .iter()
        .filter(|c| reqs[c.tag as usize].2 == Mode::Read)
        .collect();
    let slow = reads.iter().filter(|c| c.latency_ns() > 1_000_000).count();
    slow as f64 / reads.len() as f64
}

const SSD_L: &str = "ssd-l,capacity=1GiB,prefill=on";

#[test]
fn on_ssd_l_over_80_percent_of_reads_mingled_with_writes_take_over_1ms() {
    for (name, reqs) in [
        ("write(n)+read(n)", write_then_read(500)),
        ("read(n)+write(n+4MB)", read_and_write_4mb_apart(500)),
    ] {
        let f = reads_over_1ms(SSD_L, &reqs, 0);
        assert!(f > 0.8, "{name}: {:.0} % of reads over 1 ms", f * 100.0);
    }
}

#[test]
fn a_pause_does_not_help_because_only_a_read_starts_the_program() {
    // 5.5: "inserting a delay would not improve performance"
    let f = reads_over_1ms(SSD_L, &write_then_read(300), 10_000_000);
    assert!(f > 0.8, "{:.0} % of reads over 1 ms", f * 100.0);
}

#[test]
fn without_program_on_read_the_reads_are_fast() {
    // the control: the same registers, programmed as soon as the data is in
    // (a read of the very page just written still waits for its program, so
    // the control reads other pages)
    let spec = format!("{SSD_L},cache.program_on_read=false");
    let f = reads_over_1ms(&spec, &read_and_write_4mb_apart(500), 0);
    assert!(f < 0.2, "{:.0} % of reads over 1 ms", f * 100.0);
}
