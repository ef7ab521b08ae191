//! The CPUs a process may run on, kept before the launcher pins its clients, so that a client
//! whose user named no core can be let go again: one campaign started without `--cores` then
//! runs wherever the OS puts it (as libFuzzer's does), and two such campaigns on one machine
//! do not share one core.

use std::io;

use libafl_bolts::core_affinity::{CoreId, Cores};

/// A set of CPUs, as `sched_getaffinity(2)` gives it.
#[derive(Clone, Copy)]
pub struct CpuSet(libc::cpu_set_t);

impl std::fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.cpus()).finish()
    }
}

impl CpuSet {
    /// The CPUs this process may run on now.
    pub fn current() -> io::Result<Self> {
        // SAFETY: cpu_set_t is plain data, all zeros being the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: sched_getaffinity(2) writes at most the size given, which is `set`'s.
        let rc = unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self(set))
    }

    fn cpus(&self) -> impl Iterator<Item = usize> + '_ {
        // SAFETY: CPU_ISSET reads the set's bit of each CPU below CPU_SETSIZE, all within it.
        (0..libc::CPU_SETSIZE as usize).filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &self.0) })
    }

    /// The first of them as the launcher's one core (it pins every client it starts, and
    /// must be given a core this process may use); None for an empty set.
    pub fn first_as_cores(&self) -> Option<Cores> {
        let first = self.cpus().next()?;
        Some(Cores {
            cmdline: first.to_string(),
            ids: vec![CoreId(first)],
        })
    }

    /// Lets this process (its calling thread, and the processes it starts) run on these CPUs.
    pub fn apply(&self) -> io::Result<()> {
        // SAFETY: sched_setaffinity(2) reads the set, of the size given.
        let rc = unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &self.0) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}
