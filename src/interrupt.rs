//! Ctrl-C: the first one asks a long command (a sweep, a fuzz) to stop
//! handing out work, finish what is in hand, report what it did and how to
//! resume, and exit 130; a second one ends the process at once, if it comes
//! at least [`SAME_PRESS`] after the first. Sooner, it is the same press
//! delivered twice: `timeout -s INT` sends SIGINT to the command and then
//! to its whole process group, the command again among it, and a CI job so
//! wrapped lost its report about one time in six.
//!
//! SIGTERM and SIGHUP (`timeout`, `kill`, a closed terminal or tmux pane,
//! a service manager) are heard as Ctrl-C is: a watch that has followed a
//! team for hours still writes its summary and its `--trace`.
//!
//! Outputs being written are temporary files (`output::Pending`):
//! whenever Ctrl-C ends the process at once, it first removes them, so an
//! interrupted command leaves neither a truncated output nor litter.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);
/// When the first Ctrl-C came: the monotonic clock in nanoseconds, plus one
/// (0: none yet).
static FIRST_AT: AtomicU64 = AtomicU64::new(0);
/// A second SIGINT sooner than this after the first is the same one.
pub const SAME_PRESS: std::time::Duration = std::time::Duration::from_millis(250);
/// Whether a command installed [`install`]'s handler.
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// Whether the handler that only cleans up and exits is installed.
static CLEANING: AtomicBool = AtomicBool::new(false);

/// The temporary files to remove if Ctrl-C ends the process: C strings a
/// signal handler can hand to `unlink`, in slots it can read without a lock.
#[cfg(unix)]
static TEMPORARY: [AtomicPtr<libc::c_char>; 64] = [const { AtomicPtr::new(std::ptr::null_mut()) }; 64];

/// Removes every temporary file still registered (async-signal-safe:
/// atomic loads and `unlink`).
#[cfg(unix)]
fn remove_temporary() {
    for slot in &TEMPORARY {
        let p = slot.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: `p` is a NUL-terminated string registered below and never freed.
            unsafe {
                libc::unlink(p);
            }
        }
    }
}

/// Registers `path`, a temporary output, to be removed if Ctrl-C ends the
/// process; returns its slot for [`forgotten`], or `None` if all are taken
/// (the file is then removed only by an orderly exit). A command that has
/// not installed [`install`]'s handler gets one that removes the files and
/// exits 130, instead of the default ending, which would leave them.
pub fn forget_on_interrupt(path: &std::path::Path) -> Option<usize> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
        // Leaked on purpose: a handler may read it at any moment (a few
        // dozen bytes an output).
        let p = c.into_raw();
        let slot = TEMPORARY
            .iter()
            .position(|s| s.compare_exchange(std::ptr::null_mut(), p, Ordering::AcqRel, Ordering::Acquire).is_ok());
        if !INSTALLED.load(Ordering::Relaxed) && !CLEANING.swap(true, Ordering::Relaxed) {
            for signal in STOP_SIGNALS {
                handle(signal, on_sigint_clean);
            }
        }
        slot
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// The temporary file in `slot` is gone (renamed into place or removed).
pub fn forgotten(slot: usize) {
    #[cfg(unix)]
    if let Some(s) = TEMPORARY.get(slot) {
        s.store(std::ptr::null_mut(), Ordering::Release);
    }
    #[cfg(not(unix))]
    let _ = slot;
}

#[cfg(unix)]
extern "C" fn on_sigint_clean(_: libc::c_int) {
    remove_temporary();
    // SAFETY: `_exit` is async-signal-safe and takes any status.
    unsafe { libc::_exit(130) }
}

/// Runs `f`, the moment a command puts its outputs in place, with Ctrl-C
/// held off: one pressed meanwhile ends nothing and is dropped, so the
/// outputs are all new or, pressed before, all as they were, never some of
/// each. `f` is a few renames, over before anyone could mean to stop them.
pub fn not_during<T>(f: impl FnOnce() -> T) -> T {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain calls on a signal set this function owns; the mask is
        // restored before it returns.
        unsafe {
            let mut stops: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut stops);
            for signal in STOP_SIGNALS {
                libc::sigaddset(&mut stops, signal);
            }
            let mut before: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &stops, &mut before);
            let out = f();
            // A stop signal held off meanwhile is taken here, not delivered.
            let now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            while libc::sigtimedwait(&stops, std::ptr::null_mut(), &now) > 0 {}
            libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
            out
        }
    }
    #[cfg(not(target_os = "linux"))]
    f()
}

/// Whether Ctrl-C was pressed (or SIGINT, SIGTERM or SIGHUP sent).
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// The monotonic clock, in nanoseconds plus one (async-signal-safe:
/// `clock_gettime` is).
#[cfg(unix)]
fn monotonic_plus_one() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `clock_gettime` writes into the timespec this function owns.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    (now.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(now.tv_nsec as u64).saturating_add(1)
}

#[cfg(unix)]
extern "C" fn on_sigint(_: libc::c_int) {
    // Only async-signal-safe calls here: atomics, the clock and `_exit`.
    let now = monotonic_plus_one();
    let first = match FIRST_AT.compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => now,
        Err(first) => first,
    };
    let again = REQUESTED.swap(true, Ordering::AcqRel);
    if again && now.saturating_sub(first) >= SAME_PRESS.as_nanos() as u64 {
        const SAID: &[u8] =
            b"\ninterrupted again: stopped at once, with no report (files being written are left as they were)\n";
        // SAFETY: `write` is async-signal-safe; what it fails to write is lost, nothing else.
        unsafe {
            libc::write(2, SAID.as_ptr().cast(), SAID.len());
        }
        remove_temporary();
        // SAFETY: `_exit` is async-signal-safe and takes any status.
        unsafe { libc::_exit(130) }
    }
}

/// The signals that ask a command to stop and report: Ctrl-C, and the
/// polite requests of `kill`, `timeout` and a terminal that closes.
#[cfg(unix)]
const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Installs the handler, for every stop signal; commands that do not look
/// at [`requested`] should not call this (the default, ending at once, is
/// right for them).
pub fn install() {
    INSTALLED.store(true, Ordering::Relaxed);
    #[cfg(unix)]
    for signal in STOP_SIGNALS {
        handle(signal, on_sigint);
    }
}

/// Installs `handler` for `signal`, but leaves a SIGHUP that was ignored
/// ignored: `nohup handshake run --seeds …` must outlive its terminal.
#[cfg(unix)]
fn handle(signal: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    // SAFETY: installing a handler that only stores to atomics, unlinks
    // files and calls `_exit`, all async-signal-safe; putting back the
    // disposition it replaced.
    unsafe {
        let before = libc::signal(signal, handler as *const () as libc::sighandler_t);
        if signal == libc::SIGHUP && before == libc::SIG_IGN {
            libc::signal(signal, libc::SIG_IGN);
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn a_ctrl_c_while_outputs_are_put_in_place_is_held_off_and_dropped() {
        // SIGINT's default ends this test process: were the signal let
        // through, no test would report at all.
        let got = super::not_during(|| {
            // SAFETY: raising a signal at this thread, which blocks it here.
            unsafe { libc::raise(libc::SIGINT) };
            7
        });
        assert_eq!(got, 7);
        // SAFETY: reading this thread's signal mask into a set it owns.
        let blocked = unsafe {
            let mut now: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut now);
            libc::sigismember(&now, libc::SIGINT)
        };
        assert_eq!(blocked, 0, "the mask is as it was");
    }
}
