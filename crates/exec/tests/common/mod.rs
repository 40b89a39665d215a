//! A scripted fake device with a virtual clock, shared by the executor tests.
#![allow(dead_code)]

use std::collections::VecDeque;

use flashlab_device::{
    ClockKind, Completion, Device, DeviceError, DeviceInfo, DeviceKind, IoRequest, Nanos,
};

/// Every IO takes `latency_ns`; IOs run in parallel without limit. Tracks the
/// most IOs ever outstanding.
pub struct FakeDevice {
    pub info: DeviceInfo,
    pub now: Nanos,
    pub latency_ns: Nanos,
    pub queued: Vec<IoRequest>,
    pub in_flight: VecDeque<(Nanos, Nanos, u64)>,
    pub max_seen: usize,
    pub max_outstanding: usize,
    pub fail_at_offset: Option<u64>,
    pub flushes: Vec<(Nanos, usize)>,
    /// Virtual time `begin_run` takes, like a real device's settle.
    pub settle_ns: Nanos,
    /// Clock readings at each `begin_run`.
    pub runs_begun: Vec<Nanos>,
}

impl FakeDevice {
    pub fn new(max_outstanding: usize) -> FakeDevice {
        FakeDevice {
            info: DeviceInfo {
                name: "fake".into(),
                kind: DeviceKind::Simulated,
                clock: ClockKind::Simulated,
                size_bytes: 1 << 30,
                logical_block_bytes: 512,
                identity: Default::default(),
            },
            now: 0,
            latency_ns: 100_000,
            queued: Vec::new(),
            in_flight: VecDeque::new(),
            max_seen: 0,
            max_outstanding,
            fail_at_offset: None,
            flushes: Vec::new(),
            settle_ns: 0,
            runs_begun: Vec::new(),
        }
    }
}

impl Device for FakeDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn now_ns(&self) -> Nanos {
        self.now
    }
    fn max_outstanding(&self) -> usize {
        self.max_outstanding
    }
    fn begin_run(&mut self) {
        assert!(
            self.queued.is_empty() && self.in_flight.is_empty(),
            "begin_run with IO outstanding"
        );
        self.runs_begun.push(self.now);
        self.now += self.settle_ns;
    }
    fn submit(&mut self, req: IoRequest) -> Result<(), DeviceError> {
        self.queued.push(req);
        Ok(())
    }
    fn poll(
        &mut self,
        deadline: Option<Nanos>,
        out: &mut Vec<Completion>,
    ) -> Result<(), DeviceError> {
        for r in self.queued.drain(..) {
            let tag = if Some(r.offset_bytes) == self.fail_at_offset {
                r.tag | 1 << 63
            } else {
                r.tag
            };
            self.in_flight
                .push_back((self.now, self.now + self.latency_ns, tag));
        }
        self.max_seen = self.max_seen.max(self.in_flight.len());
        let Some(&(_, done, _)) = self.in_flight.front() else {
            if let Some(d) = deadline {
                self.now = self.now.max(d);
            }
            return Ok(());
        };
        if deadline.is_some_and(|d| d < done) {
            self.now = deadline.unwrap();
            return Ok(());
        }
        self.now = done;
        while self.in_flight.front().is_some_and(|f| f.1 <= self.now) {
            let (s, c, tag) = self.in_flight.pop_front().unwrap();
            let failed = tag & 1 << 63 != 0;
            out.push(Completion {
                tag: tag & !(1 << 63),
                submit_ns: s,
                complete_ns: c,
                errno: failed.then_some(5),
            });
        }
        Ok(())
    }
    fn idle_until(&mut self, deadline: Nanos) -> Result<(), DeviceError> {
        self.now = self.now.max(deadline);
        Ok(())
    }
    fn flush(&mut self) -> Result<(), DeviceError> {
        self.flushes
            .push((self.now, self.in_flight.len() + self.queued.len()));
        Ok(())
    }
}
