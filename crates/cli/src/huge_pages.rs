//! Transparent huge pages for the simulator's state.
//!
//! A large fabric's state (ports, each switch's buffer accounting, packets, flows) is
//! hundreds of megabytes read at random, one event here and the next at another switch.
//! With 4 KiB pages nearly every such read also misses the TLB, and the page walk adds
//! cache misses of its own; 2 MiB pages cover a k = 32 fat tree's state with a few hundred
//! TLB entries. Many distributions give huge pages only to memory that asks for them
//! (`/sys/kernel/mm/transparent_hugepage/enabled` set to `madvise`). glibc's allocator asks
//! for them, for its heap and its large blocks alike, when its tunable
//! `glibc.malloc.hugetlb=1` is set; tunables are read when a program starts, so the binary
//! sets it and executes itself again, once, before it does anything else (same process,
//! same arguments).
//!
//! Invariants: at most one re-execution (the second image finds the tunable set); a user's
//! own `glibc.malloc.hugetlb` setting, whatever its value, is left alone (so
//! `GLIBC_TUNABLES=glibc.malloc.hugetlb=0` turns this off); nothing happens where the
//! kernel gives huge pages to every program or to none, or off glibc Linux; a failed
//! re-execution leaves the program running as it started.
//!
//! A tool that follows a process but not into a new image (valgrind without
//! `--trace-children=yes`) should run it with `GLIBC_TUNABLES=glibc.malloc.hugetlb=0`.

/// The tunable that makes glibc's allocator ask for transparent huge pages.
const HUGETLB: &str = "glibc.malloc.hugetlb";

/// The value of `GLIBC_TUNABLES` that adds `glibc.malloc.hugetlb=1` to `current`, or `None`
/// if `current` already sets that tunable.
fn tunables_with_hugetlb(current: Option<&str>) -> Option<String> {
    match current {
        Some(t) if t.split(':').any(|kv| kv.split('=').next() == Some(HUGETLB)) => None,
        Some(t) if !t.is_empty() => Some(format!("{t}:{HUGETLB}=1")),
        _ => Some(format!("{HUGETLB}=1")),
    }
}

/// Whether the kernel gives transparent huge pages only on request, from the contents of
/// `/sys/kernel/mm/transparent_hugepage/enabled` (`always [madvise] never`).
fn huge_pages_on_request(enabled: &str) -> bool {
    enabled.split_whitespace().any(|mode| mode == "[madvise]")
}

/// Executes this program again with glibc's huge-page tunable set, where that changes
/// anything (see the module). Returns only if it did not: nothing to do, or the
/// re-execution failed.
pub fn reexec_with_huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        let current = match std::env::var("GLIBC_TUNABLES") {
            Ok(t) => Some(t),
            Err(std::env::VarError::NotPresent) => None,
            // Not ours to rewrite.
            Err(std::env::VarError::NotUnicode(_)) => return,
        };
        let Some(tunables) = tunables_with_hugetlb(current.as_deref()) else {
            return;
        };
        let enabled = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        if !enabled.is_ok_and(|e| huge_pages_on_request(&e)) {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut args = std::env::args_os();
        let mut command = std::process::Command::new(exe);
        if let Some(arg0) = args.next() {
            command.arg0(arg0);
        }
        // Returns only on failure; the program then goes on as it is.
        let _ = command.args(args).env("GLIBC_TUNABLES", tunables).exec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tunable_is_added_once_and_a_users_choice_kept() {
        assert_eq!(
            tunables_with_hugetlb(None).as_deref(),
            Some("glibc.malloc.hugetlb=1")
        );
        assert_eq!(
            tunables_with_hugetlb(Some("")).as_deref(),
            Some("glibc.malloc.hugetlb=1")
        );
        assert_eq!(
            tunables_with_hugetlb(Some("glibc.malloc.arena_max=2")).as_deref(),
            Some("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1")
        );
        assert_eq!(tunables_with_hugetlb(Some("glibc.malloc.hugetlb=1")), None);
        assert_eq!(
            tunables_with_hugetlb(Some("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0")),
            None,
            "turned off by the user"
        );
        // A tunable whose name only starts with ours is another one.
        assert!(tunables_with_hugetlb(Some("glibc.malloc.hugetlbx=1")).is_some());
    }

    #[test]
    fn only_the_on_request_mode_asks_for_the_tunable() {
        assert!(huge_pages_on_request("always [madvise] never\n"));
        assert!(!huge_pages_on_request("[always] madvise never\n"));
        assert!(!huge_pages_on_request("always madvise [never]\n"));
        assert!(!huge_pages_on_request(""));
    }
}
