//! How the client finds and starts `ided acp`: the executable from `--ided`, `IDED_BIN`, or
//! `PATH`, run in the workspace.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Environment variable naming the `ided` executable (or a command line, split on spaces).
pub const IDED_BIN_ENV: &str = "IDED_BIN";

/// Everything needed to start the agent; hashing it identifies the connection subscription,
/// so bumping `generation` restarts it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Launch {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments (`acp` last).
    pub args: Vec<String>,
    /// The workspace: the process's working directory and the session's `cwd`.
    pub workspace: PathBuf,
    /// Extra environment for the agent.
    pub env: Vec<(String, String)>,
    /// Restart counter.
    pub generation: u64,
}

impl Launch {
    /// `ided acp` for `workspace`, the executable from `explicit`, else `IDED_BIN`, else PATH.
    pub fn resolve(explicit: Option<&str>, workspace: &Path) -> Result<Launch, String> {
        let spec = explicit
            .map(str::to_owned)
            .or_else(|| std::env::var(IDED_BIN_ENV).ok().filter(|v| !v.trim().is_empty()));
        let (program, mut args) = match spec {
            Some(spec) => {
                let mut parts = spec.split_whitespace().map(str::to_owned);
                let program = parts.next().ok_or("the ided command is empty")?;
                (PathBuf::from(program), parts.collect::<Vec<_>>())
            }
            None => (
                find_on_path("ided", std::env::var_os("PATH"))
                    .ok_or_else(|| format!("no `ided` executable on PATH; pass --ided PATH or set {IDED_BIN_ENV}"))?,
                Vec::new(),
            ),
        };
        args.push("acp".into());
        Ok(Launch {
            program,
            args,
            workspace: workspace.to_path_buf(),
            env: Vec::new(),
            generation: 0,
        })
    }

    /// The command line, for messages.
    pub fn command_line(&self) -> String {
        std::iter::once(self.program.display().to_string())
            .chain(self.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The first executable file called `name` in the `PATH` list.
pub fn find_on_path(name: &str, path: Option<OsString>) -> Option<PathBuf> {
    std::env::split_paths(&path?)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_command_gets_acp_appended_and_path_lookup_needs_an_executable() {
        let dir = tempfile::tempdir().unwrap();
        let launch = Launch::resolve(Some("uv run --frozen ided"), dir.path()).unwrap();
        assert_eq!(launch.program, PathBuf::from("uv"));
        assert_eq!(launch.args, ["run", "--frozen", "ided", "acp"]);
        assert_eq!(launch.workspace, dir.path());

        let bin = dir.path().join("ided");
        std::fs::write(&bin, "#!/bin/sh\n").unwrap();
        let path = Some(dir.path().as_os_str().to_owned());
        assert_eq!(find_on_path("ided", path.clone()), None, "not executable yet");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert_eq!(find_on_path("ided", path), Some(bin));
        }
    }
}
