//! The machine an asking process runs on, as every surface names it.

/// The name of the machine this process runs on: the kernel's host name
/// (`/proc/sys/kernel/hostname`, what `hostname` prints), else `/etc/hostname`; trimmed,
/// `None` when neither gives a non-blank name. Every host uses this one helper, so the inbox
/// names a machine the same way whichever host asked.
#[must_use]
pub fn host_name() -> Option<String> {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|path| {
            std::fs::read_to_string(path)
                .ok()
                .and_then(|text| text.lines().next().map(|l| l.trim().to_owned()))
                .filter(|name| !name.is_empty())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_name_is_the_kernels_trimmed() {
        let kernel = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty());
        if let Some(kernel) = kernel {
            assert_eq!(host_name(), Some(kernel));
        }
    }
}
