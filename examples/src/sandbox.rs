//! A directory the file tools are confined to.
//!
//! Paths from the model are relative to the root. They may not be absolute and may not contain
//! `..`; after resolution (which follows symbolic links) they must still lie inside the root,
//! so a link pointing outside is refused too.

use std::path::{Component, Path, PathBuf};

use tool_core::ToolError;

/// A canonical root directory.
#[derive(Debug, Clone)]
pub(crate) struct Sandbox {
    root: PathBuf,
}

/// Longest accepted path, in characters (the tools' docs say so).
pub(crate) const MAX_PATH_CHARS: usize = 1_024;

/// Checks a model-supplied relative path lexically: not too long, no root, no prefix, no `..`.
fn check_relative(rel: &str) -> Result<&Path, ToolError> {
    let chars = rel.chars().count();
    if chars > MAX_PATH_CHARS {
        return Err(ToolError::new(format!(
            "The path is {chars} characters long; the limit is {MAX_PATH_CHARS}."
        )));
    }
    let path = Path::new(rel);
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => {
                return Err(ToolError::new(format!(
                    "The path `{rel}` is absolute; give a path relative to the root directory (for example `src/main.rs`)."
                )));
            }
            Component::ParentDir => {
                return Err(ToolError::new(format!(
                    "The path `{rel}` contains `..`, which could leave the root directory; give a path inside the root without `..`."
                )));
            }
            Component::CurDir | Component::Normal(_) => {}
        }
    }
    Ok(path)
}

impl Sandbox {
    /// Opens a root directory (resolved to its canonical form).
    pub(crate) fn open(root: &Path) -> Result<Sandbox, ToolError> {
        let canonical = root
            .canonicalize()
            .map_err(|e| ToolError::new(format!("The root directory `{}` cannot be opened: {e}", root.display())))?;
        if !canonical.is_dir() {
            return Err(ToolError::new(format!("The root `{}` is not a directory.", root.display())));
        }
        Ok(Sandbox { root: canonical })
    }

    fn ensure_inside(&self, rel: &str, resolved: &Path) -> Result<(), ToolError> {
        if resolved.starts_with(&self.root) {
            Ok(())
        } else {
            Err(ToolError::new(format!(
                "The path `{rel}` resolves outside the root directory (through a symbolic link); it is not accessible."
            )))
        }
    }

    /// Resolves an existing path inside the root (`""` and `"."` are the root itself).
    pub(crate) fn resolve_existing(&self, rel: &str) -> Result<PathBuf, ToolError> {
        let path = check_relative(rel)?;
        let resolved = self
            .root
            .join(path)
            .canonicalize()
            .map_err(|e| ToolError::new(format!("The path `{rel}` cannot be opened under the root directory: {e}")))?;
        self.ensure_inside(rel, &resolved)?;
        Ok(resolved)
    }

    /// Resolves a path that may not exist yet: its deepest existing ancestor must lie inside
    /// the root, and the path itself must not be a symbolic link or a directory.
    pub(crate) fn resolve_new(&self, rel: &str) -> Result<PathBuf, ToolError> {
        let path = check_relative(rel)?;
        if path.file_name().is_none() {
            return Err(ToolError::new(format!("The path `{rel}` does not name a file.")));
        }
        let target = self.root.join(path);
        let mut ancestor = target.parent();
        while let Some(a) = ancestor {
            if a.exists() {
                let resolved = a
                    .canonicalize()
                    .map_err(|e| ToolError::new(format!("The path `{rel}` cannot be resolved: {e}")))?;
                self.ensure_inside(rel, &resolved)?;
                if !resolved.is_dir() {
                    return Err(ToolError::new(format!(
                        "The path `{rel}` goes through `{}`, which is a file, not a directory.",
                        self.relative(&resolved)
                    )));
                }
                break;
            }
            ancestor = a.parent();
        }
        match std::fs::symlink_metadata(&target) {
            Ok(m) if m.file_type().is_symlink() => Err(ToolError::new(format!(
                "The path `{rel}` is a symbolic link; links are not written through."
            ))),
            Ok(m) if m.is_dir() => Err(ToolError::new(format!("The path `{rel}` is a directory, not a file."))),
            _ => Ok(target),
        }
    }

    /// A path inside the root as `/`-separated text relative to it (`.` for the root).
    pub(crate) fn relative(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        if parts.is_empty() { ".".to_owned() } else { parts.join("/") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_checks() {
        assert!(check_relative("a/b.txt").is_ok());
        assert!(check_relative("./a").is_ok());
        assert!(check_relative("").is_ok());
        assert!(check_relative("../x").unwrap_err().message().contains("`..`"));
        assert!(check_relative("a/../../x").unwrap_err().message().contains("`..`"));
        assert!(check_relative("/etc/passwd").unwrap_err().message().contains("absolute"));
        assert!(check_relative(&"a/".repeat(MAX_PATH_CHARS / 2)).is_ok());
        let e = check_relative(&"a/".repeat(MAX_PATH_CHARS)).unwrap_err();
        assert!(e.message().contains("limit is 1024"), "{e}");
    }

    #[test]
    fn resolution_stays_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/a.txt"), "a").unwrap();
        std::fs::write(dir.path().join("file"), "f").unwrap();
        let sb = Sandbox::open(dir.path()).unwrap();
        assert_eq!(sb.relative(&sb.resolve_existing("sub/a.txt").unwrap()), "sub/a.txt");
        assert_eq!(sb.relative(&sb.resolve_existing("").unwrap()), ".");
        assert!(sb.resolve_existing("missing").is_err());
        assert_eq!(sb.relative(&sb.resolve_new("new/deeper/b.txt").unwrap()), "new/deeper/b.txt");
        assert!(sb.resolve_new("sub").unwrap_err().message().contains("directory"));
        assert!(sb.resolve_new("file/x.txt").unwrap_err().message().contains("is a file"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.path(), dir.path().join("escape")).unwrap();
            let e = sb.resolve_existing("escape").unwrap_err();
            assert!(e.message().contains("outside the root"), "{e}");
            let e = sb.resolve_new("escape/new.txt").unwrap_err();
            assert!(e.message().contains("outside the root"), "{e}");
            std::os::unix::fs::symlink(dir.path().join("sub/a.txt"), dir.path().join("link.txt")).unwrap();
            assert!(sb.resolve_new("link.txt").unwrap_err().message().contains("symbolic link"));
        }
        assert!(
            Sandbox::open(&dir.path().join("file"))
                .unwrap_err()
                .message()
                .contains("not a directory")
        );
        assert!(Sandbox::open(&dir.path().join("nope")).is_err());
    }
}
