//! Property tests: whatever the parameters, no IO leaves
//! [TargetOffset, TargetOffset + TargetSize), every IO is aligned as the
//! algebra says, and generation is a pure function of the spec.

use flashlab_pattern::args::{MixValue, RatioValue, SizeValue};
use flashlab_pattern::{all_ios, PatternArgs, StreamGen};
use proptest::prelude::*;

const DEVICE_BYTES: u64 = 64 << 30;

fn location() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("sequential".to_string()),
        Just("random".to_string()),
        Just("random-once".to_string()),
        (-3i64..300).prop_map(|i| format!("ordered:{i}")),
        (1u64..300).prop_map(|p| format!("partitioned:{p}")),
        (0u64..64).prop_map(|g| format!("stride:{}", g * 512)),
        (1u64..=100).prop_map(|f| format!("skip-sequential:{}", f as f64 / 100.0)),
    ]
}

fn args() -> impl Strategy<Value = PatternArgs> {
    (
        location(),
        prop_oneof![Just("read"), Just("write"), Just("trim")],
        1u64..=512,      // IOSize in sectors
        0u64..=64,       // IOShift in sectors
        0u64..(1 << 20), // TargetOffset in sectors
        1u64..(1 << 16), // TargetSize in sectors x 8
        1u64..=8,        // ParallelDegree
        prop::option::of((location(), 1u64..=64, 1u64..=8)),
        any::<u64>(),
    )
        .prop_map(
            |(loc, mode, size, shift, off, ts, par, mix, seed)| PatternArgs {
                location: Some(loc),
                mode: Some(mode.to_string()),
                io_size: Some(SizeValue::Bytes(size * 512)),
                io_shift: Some(SizeValue::Bytes(shift * 512)),
                target_offset: Some(SizeValue::Bytes(off * 512)),
                target_size: Some(SizeValue::Bytes(ts * 8 * 512)),
                io_count: Some(300),
                parallel: Some(par),
                seed: Some(seed),
                mix: mix
                    .as_ref()
                    .map(|(l, _, _)| MixValue::Text(format!("{l}/read"))),
                ratio: mix.map(|(_, a, b)| RatioValue::Text(format!("{a}:{b}"))),
                ..PatternArgs::default()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn no_io_leaves_the_target(args in args()) {
        // Parameter combinations that do not fit are refused, never clamped.
        let Ok(spec) = args.resolve(DEVICE_BYTES) else { return Ok(()); };
        let start = spec.target_offset_bytes;
        let end = start + spec.target_size_bytes;
        let mut count = 0;
        for io in all_ios(&spec) {
            prop_assert!(io.offset_bytes >= start, "IO {io:?} before target start {start}");
            prop_assert!(io.offset_bytes + io.size_bytes <= end, "IO {io:?} past target end {end}");
            prop_assert_eq!(io.offset_bytes % 512, 0);
            // Each stream keeps to its own slice.
            let (s_off, s_size) = spec.stream_target(io.stream);
            prop_assert!(io.offset_bytes >= s_off && io.offset_bytes + io.size_bytes <= s_off + s_size);
            count += 1;
        }
        prop_assert_eq!(count, spec.total_ios());
    }

    #[test]
    fn generation_is_pure(args in args()) {
        let Ok(spec) = args.resolve(DEVICE_BYTES) else { return Ok(()); };
        let a: Vec<_> = StreamGen::new(&spec, 0).collect();
        let b: Vec<_> = StreamGen::new(&spec, 0).collect();
        prop_assert_eq!(a, b);
    }
}
