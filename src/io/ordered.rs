//! The ordered parallel work queue that fsim-partition's `F` lines,
//! fsim-verify's batches and fsim-eval's documents share: items taken in
//! order by a few threads, results handed back in input order, so the
//! output is the same whatever the number of threads and their speeds.
//!
//! Memory is bounded: at most `window` items are in flight (taken from the
//! producer and not yet handed to the consumer), whatever the threads'
//! speeds; a slow item at the head holds back the dispatch of more than
//! `window` past it, never the memory.

use std::collections::BTreeMap;
use std::sync::mpsc::{channel, sync_channel};
use std::sync::Mutex;

/// Run `work` on the items `next` produces, one thread per state of
/// `states` (each thread works with its own), and hand the results to
/// `sink` in the order of the items (`states` must not be empty). `next`
/// and `sink` run on the calling thread; at most `window` (at least 1)
/// items are in flight. The first error of `next` or `sink` (any error
/// type: fsim's own, or `io::Error` for the chunker) stops the queue (items
/// in flight are finished and dropped) and is returned; a panic in `work`
/// is resumed here.
pub fn ordered_map<S, I, O, E>(
    states: &mut [S],
    window: usize,
    work: impl Fn(&mut S, I) -> O + Sync,
    mut next: impl FnMut() -> std::result::Result<Option<I>, E>,
    mut sink: impl FnMut(O) -> std::result::Result<(), E>,
) -> std::result::Result<(), E>
where
    S: Send,
    I: Send,
    O: Send,
{
    assert!(!states.is_empty(), "ordered_map needs at least one thread");
    let window = window.max(1) as u64;
    // Items wait in a channel of `window` at most, so sending never blocks:
    // the in-flight count below is what holds the producer back.
    let (job_tx, job_rx) = sync_channel::<(u64, I)>(window as usize);
    let job_rx = Mutex::new(job_rx);
    type Done<O> = std::thread::Result<(u64, O)>;
    let (done_tx, done_rx) = channel::<Done<O>>();
    std::thread::scope(|s| {
        for state in states.iter_mut() {
            let (job_rx, done_tx, work) = (&job_rx, done_tx.clone(), &work);
            s.spawn(move || loop {
                let job = job_rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                let Ok((k, item)) = job else { return };
                let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    (k, work(state, item))
                }));
                let panicked = out.is_err();
                if done_tx.send(out).is_err() || panicked {
                    return;
                }
            });
        }
        drop(done_tx);
        // Moved in, so that it is dropped (and the workers stop) however
        // this closure ends, a resumed panic included.
        let job_tx = job_tx;
        let (mut sent, mut done, mut more) = (0u64, 0u64, true);
        let mut waiting: BTreeMap<u64, O> = BTreeMap::new();
        // A result back from a worker, kept until those before it are in;
        // then every result that is next goes to the sink.
        let mut arrived = |r: Done<O>, done: &mut u64| -> std::result::Result<(), E> {
            match r {
                Ok((k, out)) => waiting.insert(k, out),
                Err(panic) => std::panic::resume_unwind(panic),
            };
            while let Some(out) = waiting.remove(done) {
                *done += 1;
                sink(out)?;
            }
            Ok(())
        };
        loop {
            while more && sent - done < window {
                match next()? {
                    // At most `window` wait in the channel: never blocks.
                    Some(item) => {
                        job_tx
                            .send((sent, item))
                            .expect("the workers hold the jobs' receiver");
                        sent += 1;
                    }
                    None => more = false,
                }
                // What is done goes on now, not after the window fills: a
                // slow `next` (a walk that pauses) holds back no result.
                while let Ok(r) = done_rx.try_recv() {
                    arrived(r, &mut done)?;
                }
            }
            if !more && done == sent {
                return Ok(());
            }
            let r = done_rx
                .recv()
                .expect("the workers stop only when the jobs end");
            arrived(r, &mut done)?;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    /// Results come in input order, with items of very different costs,
    /// and never more than `window` in flight.
    #[test]
    fn results_in_input_order_within_the_window() {
        for (threads, window) in [(1, 1), (2, 1), (3, 4), (4, 64)] {
            let mut states = vec![0u64; threads];
            let mut produced = 0u64;
            let mut got = Vec::new();
            // Items taken and not yet handed back, and the most at once.
            let flying = std::cell::Cell::new(0usize);
            let mut most = 0;
            ordered_map::<_, _, _, Error>(
                &mut states,
                window,
                |done: &mut u64, x: u64| {
                    // Uneven work: every seventh item is slow.
                    if x.is_multiple_of(7) {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                    *done += 1;
                    x * 3
                },
                || {
                    if produced == 200 {
                        return Ok(None);
                    }
                    produced += 1;
                    flying.set(flying.get() + 1);
                    most = most.max(flying.get());
                    Ok(Some(produced - 1))
                },
                |y| {
                    flying.set(flying.get() - 1);
                    got.push(y);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(flying.get(), 0);
            assert_eq!(got, (0..200).map(|x| x * 3).collect::<Vec<_>>());
            assert!(most <= window, "{most} in flight, window {window}");
            assert_eq!(states.iter().sum::<u64>(), 200);
        }
    }

    #[test]
    fn the_first_error_stops_the_queue() {
        let mut states = vec![(); 2];
        let mut n = 0;
        let e = ordered_map(
            &mut states,
            4,
            |_, x: u32| x,
            || {
                n += 1;
                if n == 50 {
                    return Err(Error::msg("producer failed"));
                }
                Ok(Some(n))
            },
            |_| Ok(()),
        );
        assert!(e.unwrap_err().to_string().contains("producer failed"));
        let mut m = 0;
        let e = ordered_map(
            &mut states,
            4,
            |_, x: u32| x,
            || {
                m += 1;
                Ok((m < 1000).then_some(m))
            },
            |x| match x {
                10 => Err(Error::msg("consumer failed")),
                _ => Ok(()),
            },
        );
        assert!(e.unwrap_err().to_string().contains("consumer failed"));
        assert!(m < 1000, "the producer ran on after the error");
    }

    #[test]
    #[should_panic(expected = "item 5")]
    fn a_panic_in_the_work_reaches_the_caller() {
        let mut states = vec![(); 3];
        let mut n = 0;
        let _ = ordered_map::<_, _, _, Error>(
            &mut states,
            8,
            |_, x: u32| {
                assert!(x != 5, "item 5");
                x
            },
            || {
                n += 1;
                Ok((n < 100).then_some(n))
            },
            |_| Ok(()),
        );
    }
}
