//! `write-file`: writes a text file inside a sandboxed root.
//!
//! Shows `require_approval = predicate` (replacing an existing file needs a human's approval,
//! creating a new one does not), `suspend`/`resume` types (the conflict a user is asked to
//! settle, and their decision) and `context = T` with a `#[ctx]` parameter.

use std::io::Write;
use std::path::PathBuf;

use tool_core::prelude::*;

use crate::sandbox::Sandbox;

/// Largest accepted `content`, in bytes (UTF-8).
pub const MAX_CONTENT_BYTES: usize = 5 << 20;

/// The request context `write-file` needs.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct WriteContext {
    /// The directory writes are confined to (absolute, or relative to the working directory).
    pub root: PathBuf,
}

/// The file to write.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct WriteFileInput {
    /// Where to write, relative to the root, e.g. `notes/todo.md` (at most 1024 characters).
    /// Missing directories are created.
    pub path: String,
    /// The complete new contents of the file (UTF-8 text, at most 5 MiB).
    pub content: String,
    /// Replace the file if it exists (default `false`: an existing file is an error). Replacing
    /// requires approval.
    pub overwrite: Option<bool>,
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WriteResult {
    /// The file, relative to the root.
    pub path: String,
    /// Bytes written.
    pub bytes_written: usize,
    /// `true` if the file is new, `false` if it replaced an existing file.
    pub created: bool,
}

/// The suspend payload: the file exists and the user must decide whether to replace it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OverwriteConflict {
    /// The existing file, relative to the root.
    pub path: String,
    /// Its current size in bytes.
    pub existing_bytes: u64,
    /// Size of the new contents in bytes.
    pub new_bytes: usize,
}

/// The resume data: the user's decision on an [`OverwriteConflict`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct OverwriteDecision {
    /// Replace the existing file.
    pub overwrite: bool,
}

/// The approval predicate: replacing a file destroys its old contents, so it needs approval;
/// creating a new file does not.
pub fn replacing_needs_approval(input: &WriteFileInput, _cx: &WriteContext) -> bool {
    input.overwrite.unwrap_or(false)
}

/// Writes `input` under `root`: new files are created exclusively (never clobbering a file that
/// appeared meanwhile); replacements are written to a temporary file and renamed into place, so
/// readers never see a half-written file. An existing file without `overwrite` is a conflict
/// for the user to settle (`Ok(Err(conflict))`).
pub fn write(root: &std::path::Path, input: &WriteFileInput) -> Result<Result<WriteResult, OverwriteConflict>, ToolError> {
    if input.content.len() > MAX_CONTENT_BYTES {
        return Err(ToolError::new(format!(
            "The content is {} bytes; the limit is {MAX_CONTENT_BYTES} bytes (5 MiB).",
            input.content.len()
        )));
    }
    let sandbox = Sandbox::open(root)?;
    let target = sandbox.resolve_new(&input.path)?;
    let rel = sandbox.relative(&target);
    let io = |what: &str, e: std::io::Error| ToolError::new(format!("Cannot {what} `{rel}`: {e}"));
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io("create the directories of", e))?;
    }
    let bytes = input.content.as_bytes();
    match std::fs::metadata(&target) {
        // Only a regular file is ever replaced: never a FIFO, socket or device.
        Ok(existing) if !existing.is_file() => Err(ToolError::new(format!(
            "`{rel}` exists and is not a regular file (a FIFO, socket or device); it is not written to or replaced."
        ))),
        Ok(existing) if !input.overwrite.unwrap_or(false) => Ok(Err(OverwriteConflict {
            path: rel.clone(),
            existing_bytes: existing.len(),
            new_bytes: bytes.len(),
        })),
        Ok(_) => {
            let tmp = target.with_file_name(format!(
                ".{}.toolsmith-tmp",
                target.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
            ));
            // `create_new` never follows or reuses an existing entry (a planted link included).
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
                .map_err(|e| io("prepare the replacement of", e))?;
            file.write_all(bytes).and_then(|()| file.sync_all()).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                io("write", e)
            })?;
            drop(file);
            std::fs::rename(&tmp, &target).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                io("replace", e)
            })?;
            Ok(Ok(WriteResult {
                path: rel,
                bytes_written: bytes.len(),
                created: false,
            }))
        }
        Err(_) => {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&target)
                .map_err(|e| io("create", e))?;
            file.write_all(bytes).map_err(|e| io("write", e))?;
            Ok(Ok(WriteResult {
                path: rel,
                bytes_written: bytes.len(),
                created: true,
            }))
        }
    }
}

/// Write a UTF-8 text file inside the root directory given by the request context
///
/// Creates the file (and missing directories). An existing file is only replaced with
/// `overwrite: true`, which requires the user's approval; without it the call waits for the
/// user to decide (it suspends with the conflict and resumes with their decision). Paths must
/// stay inside the root: absolute paths, `..` and symbolic links are refused, and only regular
/// files are written (never a FIFO, socket or device). Limits: the content is at most 5 MiB,
/// the path at most 1024 characters.
#[tool(
    id = "write-file",
    tags = ["files"],
    context = WriteContext,
    require_approval = replacing_needs_approval,
    suspend = OverwriteConflict,
    resume = OverwriteDecision,
    mcp(title = "Write File", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
)]
pub async fn write_file(
    input: WriteFileInput,
    #[ctx] cx: ToolContext<WriteContext, OverwriteConflict, OverwriteDecision>,
) -> Result<WriteResult, ToolError> {
    let root = cx.request_context().root.clone();
    let mut input = input;
    match cx.resume_data()? {
        Some(OverwriteDecision { overwrite: true }) => input.overwrite = Some(true),
        Some(OverwriteDecision { overwrite: false }) => {
            return Err(ToolError::new(format!(
                "The user chose to keep the existing `{}`; nothing was written.",
                input.path
            )));
        }
        None => {}
    }
    let written = tokio::task::spawn_blocking(move || write(&root, &input))
        .await
        .map_err(|e| ToolError::new(format!("The write stopped unexpectedly: {e}")))??;
    written.map_err(|conflict| cx.suspend(conflict))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_core::spec::ApprovalRule;

    fn input(path: &str, content: &str, overwrite: Option<bool>) -> WriteFileInput {
        WriteFileInput {
            path: path.into(),
            content: content.into(),
            overwrite,
        }
    }

    #[test]
    fn oversized_content_and_special_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let big = "x".repeat(MAX_CONTENT_BYTES + 1);
        let e = write(dir.path(), &input("big.txt", &big, None)).unwrap_err();
        assert!(e.message().contains("the limit is 5242880 bytes"), "{e}");
        assert!(!dir.path().join("big.txt").exists());
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            let fifo = dir.path().join("pipe");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            for overwrite in [None, Some(true)] {
                let e = write(dir.path(), &input("pipe", "x", overwrite)).unwrap_err();
                assert!(e.message().contains("not a regular file"), "{e}");
            }
            assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        }
    }

    #[test]
    fn creates_files_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        let r = write(dir.path(), &input("notes/todo.md", "- write tests\n", None))
            .unwrap()
            .unwrap();
        assert_eq!(
            r,
            WriteResult {
                path: "notes/todo.md".into(),
                bytes_written: 14,
                created: true
            }
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("notes/todo.md")).unwrap(),
            "- write tests\n"
        );
    }

    #[test]
    fn existing_files_are_only_replaced_on_request() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &input("a.txt", "old", None)).unwrap().unwrap();
        let conflict = write(dir.path(), &input("a.txt", "newer", Some(false))).unwrap().unwrap_err();
        assert_eq!(
            conflict,
            OverwriteConflict {
                path: "a.txt".into(),
                existing_bytes: 3,
                new_bytes: 5
            }
        );
        assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "old");
        let r = write(dir.path(), &input("a.txt", "newer", Some(true))).unwrap().unwrap();
        assert!(!r.created);
        assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "newer");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file is left behind"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_temporary_link_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        write(dir.path(), &input("a.txt", "old", None)).unwrap().unwrap();
        std::os::unix::fs::symlink(outside.path().join("victim"), dir.path().join(".a.txt.toolsmith-tmp")).unwrap();
        assert!(write(dir.path(), &input("a.txt", "new", Some(true))).is_err());
        assert!(!outside.path().join("victim").exists());
        assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "old");
    }

    #[test]
    fn escapes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            write(dir.path(), &input("../evil.txt", "x", None))
                .unwrap_err()
                .message()
                .contains("`..`")
        );
        assert!(
            write(dir.path(), &input("/tmp/evil.txt", "x", None))
                .unwrap_err()
                .message()
                .contains("absolute")
        );
        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
            let e = write(dir.path(), &input("out/evil.txt", "x", None)).unwrap_err();
            assert!(e.message().contains("outside the root"), "{e}");
            assert!(!outside.path().join("evil.txt").exists());
        }
    }

    #[test]
    fn approval_is_required_for_replacing_only() {
        let tool = Registry::global().get("write-file").unwrap();
        assert_eq!(tool.spec().policy.require_approval, ApprovalRule::Predicate);
        let cx = json!({"root": "/tmp"});
        let cx = cx.as_object().unwrap();
        assert!(!tool.requires_approval(tool_core::ToolInput::Value(&json!({"path": "a", "content": "x"})), cx, None));
        assert!(tool.requires_approval(
            tool_core::ToolInput::Value(&json!({"path": "a", "content": "x", "overwrite": true})),
            cx,
            None
        ));
        // Fails closed: a context that does not fit the type means approval is required.
        assert!(tool.requires_approval(
            tool_core::ToolInput::Value(&json!({"path": "a", "content": "x"})),
            &serde_json::Map::new(),
            None
        ));
    }

    #[test]
    fn suspend_and_resume_schemas_are_derived() {
        let spec = Registry::global().get("write-file").unwrap().spec().clone();
        assert_eq!(
            spec.schemas.suspend.unwrap()["required"],
            json!(["path", "existing_bytes", "new_bytes"])
        );
        assert_eq!(spec.schemas.resume.unwrap()["required"], json!(["overwrite"]));
    }

    #[tokio::test]
    async fn call_through_the_registry() {
        let dir = tempfile::tempdir().unwrap();
        let out = Registry::global()
            .call(
                "write-file",
                json!({"path": "hello.txt", "content": "hi"}),
                CallOptions::with_context(json!({"root": dir.path()})),
            )
            .await
            .unwrap();
        assert_eq!(out.value(), json!({"path": "hello.txt", "bytes_written": 2, "created": true}));
    }
}
