//! Signals to `fsim` reach every process of the run: make runs in a
//! process group of its own, which fsim passes the stop signals on to
//! (and Ctrl-Z, and the SIGCONT that resumes), so no stage is left
//! running, or stopped, once fsim has exited or been stopped.

use crate::error::{Context, Error, Result};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};

/// make's process group while it runs, else 0.
static MAKE_GROUP: AtomicI32 = AtomicI32::new(0);

/// The first stop signal fsim received, else 0.
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

/// The signals that stop a run (SIGINT, SIGTERM, SIGHUP): fsim passes
/// them on to make's process group (make and the stage it runs), then
/// exits once make has.
extern "C" fn pass_signal_on(signal: libc::c_int) {
    let _ = STOPPED_BY.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
    let group = MAKE_GROUP.load(Ordering::SeqCst);
    if group > 0 {
        // SAFETY: kill is async-signal-safe and takes any pid; a negative
        // one names make's process group.
        unsafe { libc::kill(-group, signal) };
    }
}

/// Ctrl-Z (SIGTSTP): make's group is stopped, then fsim itself, as a
/// shell's job would be.
extern "C" fn suspend_run(_: libc::c_int) {
    let group = MAKE_GROUP.load(Ordering::SeqCst);
    // SAFETY: kill and getpid are async-signal-safe; SIGSTOP cannot be
    // caught, so fsim stops here until SIGCONT.
    unsafe {
        if group > 0 {
            libc::kill(-group, libc::SIGSTOP);
        }
        libc::kill(libc::getpid(), libc::SIGSTOP);
    }
}

/// SIGCONT (`fg`, `bg`, `kill -CONT`): make's group goes on too.
extern "C" fn resume_run(_: libc::c_int) {
    let group = MAKE_GROUP.load(Ordering::SeqCst);
    if group > 0 {
        // SAFETY: as in pass_signal_on.
        unsafe { libc::kill(-group, libc::SIGCONT) };
    }
}

/// Catch the stop signals and the job-control ones (once make is about
/// to start: before, the default action ends or stops fsim, which has
/// nothing running).
fn catch_stop_signals() -> Result<()> {
    let handlers: [(libc::c_int, extern "C" fn(libc::c_int)); 5] = [
        (libc::SIGINT, pass_signal_on),
        (libc::SIGTERM, pass_signal_on),
        (libc::SIGHUP, pass_signal_on),
        (libc::SIGTSTP, suspend_run),
        (libc::SIGCONT, resume_run),
    ];
    for (signal, handler) in handlers {
        // SAFETY: a zeroed sigaction is valid plain data; its mask is
        // emptied by sigemptyset, and the handlers only touch atomics and
        // call kill and getpid, which are async-signal-safe. Handlers are reset to
        // the default in the programs make starts (execve).
        let rc = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return Err(Error::msg(format!("cannot catch signal {signal}: {e}")));
        }
    }
    Ok(())
}

/// Run make in a process group of its own, so that a signal fsim receives
/// reaches make and every stage it runs (and none is left running once
/// fsim has exited); wait for it. Returns its status and the stop signal
/// fsim received, if any.
pub(super) fn run_make(mut make: Command) -> Result<(ExitStatus, Option<i32>)> {
    catch_stop_signals()?;
    let terminal = allow_background_output();
    let result = wait_for_make(&mut make);
    if let Some((fd, saved)) = terminal {
        // SAFETY: fd is a terminal and saved its settings from tcgetattr.
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, &saved) };
    }
    result
}

/// make's process group is not the terminal's foreground one, and with
/// `stty tostop` the terminal stops a background process that writes to
/// it: make's commands and the stages' progress would stop the run. So
/// while make runs, fsim (in the foreground) clears TOSTOP; it returns the
/// terminal and its settings to restore.
fn allow_background_output() -> Option<(libc::c_int, libc::termios)> {
    let fd = [2, 1].into_iter().find(|&fd| {
        // SAFETY: isatty, tcgetpgrp and getpgrp only read, for any fd.
        unsafe { libc::isatty(fd) == 1 && libc::tcgetpgrp(fd) == libc::getpgrp() }
    })?;
    // SAFETY: a zeroed termios is valid plain data, filled by tcgetattr on
    // a terminal fd; tcsetattr from the foreground group changes only the
    // TOSTOP flag.
    unsafe {
        let mut saved: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(fd, &mut saved) != 0 || saved.c_lflag & libc::TOSTOP == 0 {
            return None;
        }
        let mut cleared = saved;
        cleared.c_lflag &= !libc::TOSTOP;
        (libc::tcsetattr(fd, libc::TCSANOW, &cleared) == 0).then_some((fd, saved))
    }
}

fn wait_for_make(make: &mut Command) -> Result<(ExitStatus, Option<i32>)> {
    let mut child = make.process_group(0).spawn().ctx(|| "cannot run make")?;
    let group = i32::try_from(child.id()).unwrap_or(0);
    MAKE_GROUP.store(group, Ordering::SeqCst);
    let early = STOPPED_BY.load(Ordering::SeqCst);
    if early != 0 && group > 0 {
        // SAFETY: as in pass_signal_on: a signal received before make's
        // group was known is passed on now.
        unsafe { libc::kill(-group, early) };
    }
    let status = child.wait().ctx(|| "waiting for make");
    MAKE_GROUP.store(0, Ordering::SeqCst);
    let signal = STOPPED_BY.load(Ordering::SeqCst);
    Ok((status?, (signal != 0).then_some(signal)))
}
