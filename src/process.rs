//! What this process can learn of itself from the system: its memory now,
//! at its peak, and what the system has free. Facts, not measurements of
//! anything in particular: the bench reports them, the explorer stops at a
//! memory bound with them.

/// Starts a new peak-memory window (Linux: writing 5 to `clear_refs` resets
/// `VmHWM`), so each measurement reports its own peak. Best effort.
pub fn reset_peak_memory() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident memory of this process so far (Linux `VmHWM`), in bytes.
pub fn peak_memory() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// Resident memory of this process now (Linux `VmRSS`), in bytes.
pub fn resident_memory() -> Option<u64> {
    status_bytes("VmRSS:")
}

/// The bound a search takes when none is given: three quarters of the
/// memory free as it starts. All of it left no room for the search's own
/// overshoot between two looks or for the rest of the machine, and a
/// search of big states (a team of 10,000) was killed by the kernel at
/// the bound instead of stopping there.
pub fn default_memory_bound() -> Option<u64> {
    available_memory().map(|free| free / 4 * 3)
}

/// The memory the system has free for a new allocation (`MemAvailable`
/// in `/proc/meminfo`), in bytes, where the system says.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A memory figure of `/proc/self/status`, in bytes, where the system has one.
fn status_bytes(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
