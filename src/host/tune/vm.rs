//! The memory settings tune plans: transparent huge pages and swappiness.

use super::plan::Plan;
use crate::error::bad_input;
use crate::host::{kernel, sysfs, Roots};

/// `--thp` (`file` = `enabled`) and `--thp-defrag` (`defrag`): a choice file, set to one of the
/// words this kernel lists in it.
pub(super) fn thp(
    plan: &mut Plan,
    roots: &Roots,
    flag: &str,
    file: &str,
    v: &str,
) -> anyhow::Result<()> {
    let path = kernel::thp_dir(roots).join(file);
    let Some((_, choices)) = sysfs::read_bracketed(&path) else {
        return bad_input(format!(
            "this kernel has no transparent huge pages control ({} is missing), so {flag} cannot be set",
            path.display()
        ));
    };
    if !choices.iter().any(|c| c == v) {
        return bad_input(format!(
            "{flag} takes {} on this kernel, not '{v}'",
            choices.join(", ")
        ));
    }
    plan.add(
        flag,
        format!("transparent_hugepage {file}"),
        path,
        Some(v.to_string()),
        true,
    );
    Ok(())
}

/// `--swappiness`: vm.swappiness, 0 to 200.
pub(super) fn swappiness(plan: &mut Plan, roots: &Roots, s: u64) -> anyhow::Result<()> {
    let path = roots.proc.join("sys/vm/swappiness");
    if sysfs::read(&path).is_none() {
        return bad_input(format!(
            "{} does not exist, so --swappiness cannot be set",
            path.display()
        ));
    }
    if s > 200 {
        return bad_input(format!("--swappiness takes 0 to 200, not {s}"));
    }
    plan.add(
        "--swappiness",
        "vm swappiness".into(),
        path,
        Some(s.to_string()),
        false,
    );
    Ok(())
}
