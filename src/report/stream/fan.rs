//! Several txt, json and tsv reports fed by one walk: on its thread
//! ([`Tee`]) or each report on a thread of its own ([`fan_out`]), so that
//! the links are read and sorted once for all of them.

use super::sink::Sink;
use super::walk::Visit;
use crate::error::{Error, Result};
use crate::report::model::{Pair, Report};

/// Several reports fed by one walk: each is given the clusters' starts and
/// ends, and the links of the clusters it wants.
pub(super) struct Tee(pub(super) Vec<Sink>);

impl Visit for Tee {
    fn wants(&self, r: &Report, i: usize) -> bool {
        self.0.iter().any(|s| s.wants(r, i))
    }
    fn start(&mut self, r: &Report, i: usize) -> Result<()> {
        self.0.iter_mut().try_for_each(|s| Visit::start(s, r, i))
    }
    fn link(&mut self, r: &Report, i: usize, l: &Pair) -> Result<()> {
        for s in self.0.iter_mut().filter(|s| s.wants(r, i)) {
            Visit::link(s, r, i, l)?;
        }
        Ok(())
    }
    fn end(&mut self, r: &Report, i: usize) -> Result<()> {
        self.0.iter_mut().try_for_each(|s| Visit::end(s, r, i))
    }
}

/// A step of the walk, as [`Fan`] hands it to each report's thread.
#[derive(Clone, Copy)]
enum Step {
    Start(usize),
    Link(usize, Pair),
    End(usize),
}

/// Steps handed over at once: large enough that a hand-over costs nothing
/// next to the writing, small enough to be nothing in memory (40 bytes a
/// step, two batches in flight a report).
const STEPS: usize = 4096;

/// The walk's steps, in batches, to the threads of several reports
/// ([`fan_out`]): each writes its own file while the walk reads and sorts
/// the links, and the json report (most of the writing) no longer waits
/// for the text one.
pub(super) struct Fan {
    batch: Vec<Step>,
    to: Vec<std::sync::mpsc::SyncSender<std::sync::Arc<Vec<Step>>>>,
    wants: Vec<bool>,
}

impl Fan {
    fn step(&mut self, s: Step) -> Result<()> {
        self.batch.push(s);
        if self.batch.len() >= STEPS {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> Result<()> {
        let batch = std::sync::Arc::new(std::mem::take(&mut self.batch));
        for to in &self.to {
            if to.send(batch.clone()).is_err() {
                // Its thread returns the error that stopped it.
                return Err(Error::msg("a report stopped"));
            }
        }
        Ok(())
    }
}

impl Visit for Fan {
    fn wants(&self, _: &Report, i: usize) -> bool {
        self.wants[i]
    }
    fn start(&mut self, _: &Report, i: usize) -> Result<()> {
        self.step(Step::Start(i))
    }
    fn link(&mut self, _: &Report, i: usize, l: &Pair) -> Result<()> {
        self.step(Step::Link(i, *l))
    }
    fn end(&mut self, _: &Report, i: usize) -> Result<()> {
        self.step(Step::End(i))
    }
}

/// Write `sinks` (their heads written) on a thread each, fed the steps
/// that `walk` gives a [`Fan`]; the first error of a report or of the walk.
pub(super) fn fan_out(
    report: &Report,
    sinks: Vec<Sink>,
    walk: impl FnOnce(&mut Fan) -> Result<()>,
) -> Result<()> {
    let wants = (0..report.clusters.len())
        .map(|i| sinks.iter().any(|s| s.wants(report, i)))
        .collect();
    // Set when the walk failed: the reports are then dropped unfinished
    // (their temporary files removed), never closed half-written.
    let aborted = std::sync::atomic::AtomicBool::new(false);
    let aborted = &aborted;
    std::thread::scope(|scope| {
        let mut fan = Fan {
            batch: Vec::with_capacity(STEPS),
            to: Vec::new(),
            wants,
        };
        let mut writers = Vec::new();
        for mut sink in sinks {
            let (to, from) = std::sync::mpsc::sync_channel::<std::sync::Arc<Vec<Step>>>(2);
            fan.to.push(to);
            writers.push(scope.spawn(move || -> Result<()> {
                for batch in from {
                    for &step in batch.iter() {
                        match step {
                            Step::Start(i) => Visit::start(&mut sink, report, i)?,
                            Step::Link(i, l) if sink.wants(report, i) => {
                                Visit::link(&mut sink, report, i, &l)?
                            }
                            Step::Link(..) => {}
                            Step::End(i) => Visit::end(&mut sink, report, i)?,
                        }
                    }
                }
                if aborted.load(std::sync::atomic::Ordering::SeqCst) {
                    return Ok(());
                }
                sink.close(report)
            }));
        }
        let walked = walk(&mut fan).and_then(|()| fan.send());
        if walked.is_err() {
            aborted.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        drop(fan);
        let mut written = Ok(());
        for w in writers {
            let r = w.join().expect("a report's writer panicked");
            if written.is_ok() {
                written = r;
            }
        }
        // A report's own error (which stopped the walk) says more than
        // the walk's.
        written.and(walked)
    })
}
