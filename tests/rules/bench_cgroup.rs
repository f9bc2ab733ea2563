//! The out-of-core benchmark's machinery (`make bench-outofcore`,
//! docs/performance.md, *Out of core*), in scripts/benchmarks/test_cgroup.py:
//! where a memory cgroup can be made (v2, v1, neither: the reason the run
//! gives when it skips), the figures read from a group, one process
//! measured (CPU, bytes written, exit status, killing signal) and the
//! section's text when the group runs are skipped; then, where the test
//! runs as root with a memory controller, a real 32 MiB group (page cache
//! reclaimed, an allocation over it killed and counted). Also the run on
//! 10^7 files' (`make bench-tenmillion`, *10^7 files*), in
//! scripts/benchmarks/test_tenmillion.py: why it is skipped (not root, a
//! tool, no loop device, no space) and its section's text. And the re-run
//! and scratch-space benchmark's (`make bench-changes`), in
//! scripts/benchmarks/test_changes.py: the 1 % it edits or touches and its
//! section's text. Needs python3;
//! skipped with a SKIP line without it, except under CI (env var CI set).

use crate::common;

use common::*;
use std::process::Command;

#[test]
fn bench_cgroup_detection_and_measures() {
    let found = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var_os("CI").is_some() {
            panic!("python3 is needed by scripts/benchmarks/test_cgroup.py");
        }
        eprintln!("SKIP bench_cgroup_detection_and_measures: python3 is not installed");
        return;
    }
    for script in [
        "scripts/benchmarks/test_cgroup.py",
        "scripts/benchmarks/test_tenmillion.py",
        "scripts/benchmarks/test_changes.py",
    ] {
        let out = Command::new("python3")
            .arg(source_root().join(script))
            .current_dir(source_root())
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "{script} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
