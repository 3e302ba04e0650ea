//! `search-files`: finds text in file names and file contents under a sandboxed root.
//!
//! Shows `context = T` (the root directory comes from the request context, validated against
//! [`SearchContext`]'s schema before the tool runs) with a `#[ctx]` parameter, `background(..)`
//! for a search that may take a while, and the context's cancellation token and `observe`.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tool_core::CancellationToken;
use tool_core::prelude::*;

use crate::sandbox::Sandbox;

/// Default number of matches returned.
pub const DEFAULT_MAX_RESULTS: u32 = 50;
/// Files whose contents are searched at most, per call.
pub const MAX_FILES_SCANNED: usize = 10_000;
/// Larger files are skipped by content search.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Longest line excerpt returned, in characters.
pub const MAX_EXCERPT_CHARS: usize = 200;
/// Entries (files, directories, links, …) looked at, at most, per call.
pub const MAX_ENTRIES_VISITED: usize = 100_000;
/// Entries of one directory looked at, at most (the first ones the system lists).
pub const MAX_DIRECTORY_ENTRIES: usize = 10_000;
/// Deepest directory entered below the searched one.
pub const MAX_WALK_DEPTH: usize = 32;
/// Longest time one search runs, in seconds.
pub const MAX_SEARCH_SECONDS: u64 = 10;
/// Longest accepted `query`, in characters.
pub const MAX_QUERY_CHARS: usize = 1_000;

/// The request context `search-files` needs.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct SearchContext {
    /// The directory searches are confined to (absolute, or relative to the working directory).
    pub root: PathBuf,
}

/// Where to look.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// File and directory names only.
    Names,
    /// File contents only.
    Contents,
    /// Names and contents.
    #[default]
    Both,
}

/// What to search for, and where.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct SearchFilesInput {
    /// The text to find: a plain substring, not a pattern (at most 1000 characters).
    #[schemars(length(min = 1))]
    pub query: String,
    /// The directory (or single file) to search, relative to the root (at most 1024
    /// characters). Default: the whole root.
    pub path: Option<String>,
    /// Search names, contents or both (default `both`).
    pub mode: Option<SearchMode>,
    /// Match case exactly (default `false`).
    pub case_sensitive: Option<bool>,
    /// Also search names starting with `.`, such as `.git` (default `false`).
    pub include_hidden: Option<bool>,
    /// The most matches to return (default 50, at most 500).
    #[schemars(range(min = 1, max = 500))]
    pub max_results: Option<u32>,
}

/// What matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MatchKind {
    /// The file or directory name.
    Name,
    /// A line of the file.
    Content,
}

/// One match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SearchMatch {
    /// Path relative to the root, `/`-separated; directories end in `/`.
    pub path: String,
    /// Whether the name or a line of the contents matched.
    pub kind: MatchKind,
    /// 1-based line number of a content match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The matching line, trimmed (and cut at 200 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// The result of a search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SearchResults {
    /// The directory or file searched, relative to the root (`.` for the root).
    pub searched: String,
    /// The matches, in path order.
    pub matches: Vec<SearchMatch>,
    /// Whether the search ended early, so more matches may exist than were returned (raise
    /// `max_results` or narrow `path`).
    pub truncated: bool,
    /// The limit that ended the search early, if one did: `max_results` or one of the limits
    /// of the tool's description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
    /// Files whose contents were searched.
    pub files_scanned: usize,
    /// Entries not searched: symbolic links (never followed), special files (FIFOs, sockets,
    /// devices: never opened), binary files, files over 1 MiB and unreadable entries.
    pub skipped: usize,
}

struct Search<'a> {
    sandbox: &'a Sandbox,
    needle: String,
    case_sensitive: bool,
    mode: SearchMode,
    include_hidden: bool,
    max_results: usize,
    cancel: CancellationToken,
    deadline: Instant,
    visited: usize,
    out: SearchResults,
}

/// Why a walk stopped early.
enum Stop {
    Full,
    Failed(ToolError),
}

fn excerpt(line: &str) -> String {
    let line = line.trim();
    match line.char_indices().nth(MAX_EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

impl Search<'_> {
    fn matches(&self, haystack: &str) -> bool {
        if self.case_sensitive {
            haystack.contains(&self.needle)
        } else {
            haystack.to_lowercase().contains(&self.needle)
        }
    }

    fn push(&mut self, m: SearchMatch) -> Result<(), Stop> {
        if self.out.matches.len() == self.max_results {
            let n = self.max_results;
            return Err(self.limit(format!("max_results: {n} matches were found before the search ended")));
        }
        self.out.matches.push(m);
        Ok(())
    }

    /// Ends the walk early, saying which limit ended it.
    fn limit(&mut self, which: String) -> Stop {
        self.out.truncated = true;
        self.out.stopped_by = Some(which);
        Stop::Full
    }

    fn visit(&mut self, path: &Path, is_dir: bool, depth: usize) -> Result<(), Stop> {
        if self.cancel.is_cancelled() {
            return Err(Stop::Failed(ToolError::aborted("The search was cancelled")));
        }
        self.visited += 1;
        if self.visited > MAX_ENTRIES_VISITED {
            return Err(self.limit(format!(
                "MAX_ENTRIES_VISITED: at most {MAX_ENTRIES_VISITED} entries are looked at per search"
            )));
        }
        if Instant::now() >= self.deadline {
            return Err(self.limit(format!("MAX_SEARCH_SECONDS: a search runs at most {MAX_SEARCH_SECONDS} s")));
        }
        let rel = self.sandbox.relative(path);
        if self.mode != SearchMode::Contents {
            let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
            if self.matches(&name) {
                let path = if is_dir { format!("{rel}/") } else { rel.clone() };
                self.push(SearchMatch {
                    path,
                    kind: MatchKind::Name,
                    line: None,
                    text: None,
                })?;
            }
        }
        if is_dir {
            return self.walk_dir(path, depth + 1);
        }
        if self.mode != SearchMode::Names {
            self.search_contents(path, &rel)?;
        }
        Ok(())
    }

    fn walk_dir(&mut self, dir: &Path, depth: usize) -> Result<(), Stop> {
        if depth > MAX_WALK_DEPTH {
            self.out.truncated = true;
            self.out.stopped_by = Some(format!(
                "MAX_WALK_DEPTH: directories more than {MAX_WALK_DEPTH} levels below the searched one are not entered"
            ));
            return Ok(());
        }
        let Ok(entries) = fs::read_dir(dir) else {
            self.out.skipped += 1;
            return Ok(());
        };
        let mut entries: Vec<fs::DirEntry> = entries.filter_map(Result::ok).take(MAX_DIRECTORY_ENTRIES + 1).collect();
        if entries.len() > MAX_DIRECTORY_ENTRIES {
            entries.truncate(MAX_DIRECTORY_ENTRIES);
            self.out.truncated = true;
            self.out.stopped_by = Some(format!(
                "MAX_DIRECTORY_ENTRIES: `{}` has more than {MAX_DIRECTORY_ENTRIES} entries; only that many were looked at",
                self.sandbox.relative(dir)
            ));
        }
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let hidden = entry.file_name().to_string_lossy().starts_with('.');
            if hidden && !self.include_hidden {
                continue;
            }
            // `DirEntry::file_type` does not follow links: a link is never entered or read, and
            // only regular files are opened (never a FIFO, socket or device).
            match entry.file_type() {
                Ok(t) if t.is_symlink() => self.out.skipped += 1,
                Ok(t) if t.is_dir() => self.visit(&entry.path(), true, depth)?,
                Ok(t) if t.is_file() => self.visit(&entry.path(), false, depth)?,
                _ => self.out.skipped += 1,
            }
        }
        Ok(())
    }

    fn search_contents(&mut self, path: &Path, rel: &str) -> Result<(), Stop> {
        if self.out.files_scanned >= MAX_FILES_SCANNED {
            return Err(self.limit(format!("MAX_FILES_SCANNED: at most {MAX_FILES_SCANNED} files are read per search")));
        }
        let Some(file) = open_regular(path) else {
            self.out.skipped += 1;
            return Ok(());
        };
        let mut bytes = Vec::new();
        // Read one byte past the limit to tell "exactly 1 MiB" from "larger".
        if file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).is_err() || bytes.len() as u64 > MAX_FILE_BYTES {
            self.out.skipped += 1;
            return Ok(());
        }
        if bytes[..bytes.len().min(8192)].contains(&0) {
            self.out.skipped += 1; // binary
            return Ok(());
        }
        self.out.files_scanned += 1;
        let text = String::from_utf8_lossy(&bytes);
        for (i, line) in text.lines().enumerate() {
            if self.matches(line) {
                self.push(SearchMatch {
                    path: rel.to_owned(),
                    kind: MatchKind::Content,
                    line: Some(i + 1),
                    text: Some(excerpt(line)),
                })?;
            }
        }
        Ok(())
    }
}

/// Opens `path` for reading only if it is a regular file: the open neither blocks (a FIFO
/// swapped in after the walk looked would otherwise wait for a writer) nor follows a link, and
/// the opened file's own type is checked.
fn open_regular(path: &Path) -> Option<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let file = options.open(path).ok()?;
    file.metadata().ok().filter(fs::Metadata::is_file).map(|_| file)
}

/// Runs a search synchronously (the tool runs it on a blocking thread).
pub fn search(root: &Path, input: &SearchFilesInput, cancel: CancellationToken) -> Result<SearchResults, ToolError> {
    search_until(root, input, cancel, Instant::now() + Duration::from_secs(MAX_SEARCH_SECONDS))
}

/// [`search`], ending at `deadline` at the latest.
fn search_until(root: &Path, input: &SearchFilesInput, cancel: CancellationToken, deadline: Instant) -> Result<SearchResults, ToolError> {
    if input.query.is_empty() {
        return Err(ToolError::new("The query is empty; give the text to look for."));
    }
    let chars = input.query.chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(ToolError::new(format!(
            "The query is {chars} characters long; the limit is {MAX_QUERY_CHARS}."
        )));
    }
    let max_results = input.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
    if !(1..=500).contains(&max_results) {
        return Err(ToolError::new(format!(
            "max_results is {max_results}; it must be between 1 and 500."
        )));
    }
    let sandbox = Sandbox::open(root)?;
    let rel = input.path.as_deref().unwrap_or("");
    let start = sandbox.resolve_existing(rel)?;
    // The resolved path has no links left; what it names must be a directory or a regular file.
    let kind = fs::metadata(&start)
        .map_err(|e| ToolError::new(format!("The path `{rel}` cannot be read: {e}")))?
        .file_type();
    if !kind.is_dir() && !kind.is_file() {
        return Err(ToolError::new(format!(
            "The path `{rel}` is a special file (a FIFO, socket or device), not a directory or a regular file; only regular files are searched."
        )));
    }
    let case_sensitive = input.case_sensitive.unwrap_or(false);
    let mut s = Search {
        sandbox: &sandbox,
        needle: if case_sensitive {
            input.query.clone()
        } else {
            input.query.to_lowercase()
        },
        case_sensitive,
        mode: input.mode.unwrap_or_default(),
        include_hidden: input.include_hidden.unwrap_or(false),
        max_results: max_results as usize,
        cancel,
        deadline,
        visited: 0,
        out: SearchResults {
            searched: sandbox.relative(&start),
            matches: Vec::new(),
            truncated: false,
            stopped_by: None,
            files_scanned: 0,
            skipped: 0,
        },
    };
    let walked = if kind.is_dir() {
        s.walk_dir(&start, 0)
    } else {
        s.visit(&start, false, 0)
    };
    match walked {
        Ok(()) | Err(Stop::Full) => Ok(s.out),
        Err(Stop::Failed(e)) => Err(e),
    }
}

/// Search file names and contents for a piece of text under the root directory of the request context
///
/// Returns matching paths (relative to the root) and, for content matches, the line number and
/// the line. Paths must stay inside the root: absolute paths, `..` and symbolic links leading
/// outside are refused; links are never followed during the walk. Hidden entries are skipped
/// unless asked for, and binary files and files over 1 MiB are not read. Only directories and
/// regular files are searched: FIFOs, sockets and devices are never opened.
///
/// Limits per search: 10000 files read, 100000 entries looked at, 10000 entries per directory,
/// 32 directory levels below `path`, 10 seconds. A search that reaches one returns what it
/// found with `truncated: true` and `stopped_by` naming the limit.
#[tool(
    id = "search-files",
    tags = ["files"],
    context = SearchContext,
    background(enabled = true, timeout_ms = 30000, max_retries = 2),
    // A search may take seconds: Gemini's Live API goes on talking meanwhile.
    behavior = "non_blocking",
    mcp(title = "Search Files", read_only_hint = true, idempotent_hint = true, open_world_hint = false)
)]
pub async fn search_files(input: SearchFilesInput, #[ctx] cx: ToolContext<SearchContext>) -> Result<SearchResults, ToolError> {
    let root = cx.request_context().root.clone();
    let cancel = cx.cancellation().clone();
    let attrs = [("root", json!(root.display().to_string())), ("query", json!(input.query))];
    let work = async move {
        tokio::task::spawn_blocking(move || search(&root, &input, cancel))
            .await
            .map_err(|e| ToolError::new(format!("The search stopped unexpectedly: {e}")))?
    };
    let results = cx.observe().span("search-files.walk", work, &attrs).await?;
    cx.observe().log(
        LogLevel::Debug,
        "search finished",
        Some(&json!({"matches": results.matches.len(), "files_scanned": results.files_scanned})),
    );
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(query: &str) -> SearchFilesInput {
        SearchFilesInput {
            query: query.into(),
            path: None,
            mode: None,
            case_sensitive: None,
            include_hidden: None,
            max_results: None,
        }
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        fs::create_dir_all(p.join("src/net")).unwrap();
        fs::create_dir_all(p.join(".git")).unwrap();
        fs::write(p.join("README.md"), "# Demo\nSee the Config section.\n").unwrap();
        fs::write(p.join("src/config.rs"), "pub struct Config;\nfn load() -> Config { Config }\n").unwrap();
        fs::write(p.join("src/net/client.rs"), "// uses config\n").unwrap();
        fs::write(p.join(".git/config"), "[core]\n").unwrap();
        fs::write(p.join("blob.bin"), b"config\0\x01\x02").unwrap();
        dir
    }

    fn paths(r: &SearchResults) -> Vec<(String, MatchKind, Option<usize>)> {
        r.matches.iter().map(|m| (m.path.clone(), m.kind, m.line)).collect()
    }

    #[test]
    fn names_and_contents_case_insensitively_in_path_order() {
        let dir = tree();
        let r = search(dir.path(), &input("config"), CancellationToken::new()).unwrap();
        assert_eq!(
            paths(&r),
            vec![
                ("README.md".into(), MatchKind::Content, Some(2)),
                ("src/config.rs".into(), MatchKind::Name, None),
                ("src/config.rs".into(), MatchKind::Content, Some(1)),
                ("src/config.rs".into(), MatchKind::Content, Some(2)),
                ("src/net/client.rs".into(), MatchKind::Content, Some(1)),
            ]
        );
        assert_eq!(r.matches[0].text.as_deref(), Some("See the Config section."));
        assert_eq!(r.searched, ".");
        assert_eq!(r.files_scanned, 3);
        assert_eq!(r.skipped, 1, "the binary file");
        assert!(!r.truncated);
    }

    #[test]
    fn options_narrow_the_search() {
        let dir = tree();
        let mut i = input("Config");
        i.case_sensitive = Some(true);
        i.mode = Some(SearchMode::Contents);
        i.path = Some("src".into());
        let r = search(dir.path(), &i, CancellationToken::new()).unwrap();
        assert_eq!(
            paths(&r),
            vec![
                ("src/config.rs".into(), MatchKind::Content, Some(1)),
                ("src/config.rs".into(), MatchKind::Content, Some(2))
            ]
        );
        assert_eq!(r.searched, "src");

        let mut i = input("config");
        i.mode = Some(SearchMode::Names);
        i.include_hidden = Some(true);
        let r = search(dir.path(), &i, CancellationToken::new()).unwrap();
        assert_eq!(
            paths(&r),
            vec![
                (".git/config".into(), MatchKind::Name, None),
                ("src/config.rs".into(), MatchKind::Name, None)
            ]
        );

        let mut i = input("net");
        i.mode = Some(SearchMode::Names);
        assert_eq!(
            search(dir.path(), &i, CancellationToken::new()).unwrap().matches[0].path,
            "src/net/"
        );

        let mut i = input("load");
        i.path = Some("src/config.rs".into());
        let r = search(dir.path(), &i, CancellationToken::new()).unwrap();
        assert_eq!(paths(&r), vec![("src/config.rs".into(), MatchKind::Content, Some(2))]);
    }

    #[test]
    fn results_are_capped_and_say_so() {
        let dir = tree();
        let mut i = input("config");
        i.max_results = Some(2);
        let r = search(dir.path(), &i, CancellationToken::new()).unwrap();
        assert_eq!(r.matches.len(), 2);
        assert!(r.truncated);
        i.max_results = Some(501);
        assert!(search(dir.path(), &i, CancellationToken::new()).is_err());
    }

    #[test]
    fn escapes_are_refused() {
        let dir = tree();
        let mut i = input("x");
        i.path = Some("../".into());
        assert!(
            search(dir.path(), &i, CancellationToken::new())
                .unwrap_err()
                .message()
                .contains("`..`")
        );
        i.path = Some("/etc".into());
        assert!(
            search(dir.path(), &i, CancellationToken::new())
                .unwrap_err()
                .message()
                .contains("absolute")
        );
        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().unwrap();
            fs::write(outside.path().join("secret.txt"), "needle").unwrap();
            std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
            i.path = Some("out".into());
            let e = search(dir.path(), &i, CancellationToken::new()).unwrap_err();
            assert!(e.message().contains("outside the root"), "{e}");
            // During the walk, the link is skipped, not followed.
            let r = search(dir.path(), &input("needle"), CancellationToken::new()).unwrap();
            assert!(r.matches.is_empty());
            assert_eq!(r.skipped, 2, "the binary file and the link");
        }
    }

    #[test]
    fn long_lines_are_cut_and_cancellation_aborts() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("long.txt"), format!("needle{}", "x".repeat(500))).unwrap();
        let r = search(dir.path(), &input("needle"), CancellationToken::new()).unwrap();
        let text = r.matches[0].text.as_deref().unwrap();
        assert_eq!(text.chars().count(), MAX_EXCERPT_CHARS + 1);
        assert!(text.ends_with('…'));
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert!(search(dir.path(), &input("needle"), cancel).unwrap_err().is_aborted());
    }

    #[test]
    fn limits_end_the_walk_and_are_named() {
        let dir = tempfile::tempdir().unwrap();
        // A needle at every level of a chain of directories deeper than the walk enters.
        let mut deep = dir.path().to_path_buf();
        for level in 0..MAX_WALK_DEPTH + 3 {
            deep.push("d");
            fs::create_dir(&deep).unwrap();
            fs::write(deep.join("f.txt"), format!("needle {level}\n")).unwrap();
        }
        let mut i = input("needle");
        i.max_results = Some(500);
        let r = search(dir.path(), &i, CancellationToken::new()).unwrap();
        assert_eq!(
            r.matches.len(),
            MAX_WALK_DEPTH,
            "the files of the directories 1..=32 levels below the root"
        );
        assert!(r.truncated);
        assert!(r.stopped_by.as_deref().unwrap().starts_with("MAX_WALK_DEPTH"), "{r:?}");

        let wide = tempfile::tempdir().unwrap();
        for n in 0..MAX_DIRECTORY_ENTRIES + 5 {
            fs::write(wide.path().join(format!("{n:05}")), "").unwrap();
        }
        let mut i = input("0");
        i.mode = Some(SearchMode::Names);
        i.max_results = Some(500);
        let r = search(wide.path(), &i, CancellationToken::new()).unwrap();
        assert!(r.stopped_by.as_deref().unwrap().starts_with("max_results"), "{r:?}");
        i.query = "zzz".into();
        let r = search(wide.path(), &i, CancellationToken::new()).unwrap();
        assert!(r.stopped_by.as_deref().unwrap().starts_with("MAX_DIRECTORY_ENTRIES"), "{r:?}");
        assert!(r.truncated);

        let r = search(tree().path(), &input("config"), CancellationToken::new()).unwrap();
        assert_eq!((r.truncated, r.stopped_by), (false, None));
        let e = search(tree().path(), &input(&"x".repeat(1001)), CancellationToken::new()).unwrap_err();
        assert!(e.message().contains("the limit is 1000"), "{e}");
    }

    #[test]
    fn the_time_limit_ends_the_walk_and_names_itself() {
        let dir = tree();
        let r = search_until(dir.path(), &input("config"), CancellationToken::new(), Instant::now()).unwrap();
        assert_eq!((r.matches.len(), r.files_scanned, r.truncated), (0, 0, true));
        assert_eq!(r.stopped_by.as_deref(), Some("MAX_SEARCH_SECONDS: a search runs at most 10 s"));
        let later = Instant::now() + Duration::from_secs(60);
        let r = search_until(dir.path(), &input("config"), CancellationToken::new(), later).unwrap();
        assert_eq!((r.matches.len(), r.stopped_by), (5, None));
    }

    #[test]
    fn the_files_read_limit_names_itself() {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["a", "b"] {
            fs::create_dir(dir.path().join(sub)).unwrap();
            for n in 0..MAX_FILES_SCANNED / 2 + 1 {
                fs::write(dir.path().join(sub).join(format!("{n:05}")), "hay\n").unwrap();
            }
        }
        let r = search(dir.path(), &input("needle"), CancellationToken::new()).unwrap();
        assert_eq!(r.files_scanned, MAX_FILES_SCANNED);
        assert!(r.truncated);
        assert!(r.stopped_by.as_deref().unwrap().starts_with("MAX_FILES_SCANNED"), "{r:?}");
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // The open neither blocks on the FIFO nor accepts it.
        assert!(open_regular(&fifo).is_none());
        fs::write(dir.path().join("a.txt"), "pipe dream").unwrap();
        assert!(open_regular(&dir.path().join("a.txt")).is_some());
        let mut i = input("pipe");
        i.path = Some("pipe".into());
        let e = search(dir.path(), &i, CancellationToken::new()).unwrap_err();
        assert!(e.message().contains("special file"), "{e}");
        let r = search(dir.path(), &input("pipe"), CancellationToken::new()).unwrap();
        assert_eq!(paths(&r), vec![("a.txt".into(), MatchKind::Content, Some(1))]);
        assert_eq!(r.skipped, 1);
    }

    #[tokio::test]
    async fn the_root_comes_from_the_validated_request_context() {
        let dir = tree();
        let r = Registry::global();
        let options = CallOptions::with_context(json!({"root": dir.path()}));
        let out = r
            .call("search-files", json!({"query": "load", "mode": "contents"}), options)
            .await
            .unwrap();
        assert_eq!(
            out.value()["matches"],
            json!([{"path": "src/config.rs", "kind": "content", "line": 2, "text": "fn load() -> Config { Config }"}])
        );
        let err = r
            .call("search-files", json!({"query": "load"}), CallOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), tool_core::ErrorKind::InvalidContext);
        assert!(err.message().contains("root"), "{err}");
        let spec = r.get("search-files").unwrap().spec().clone();
        assert_eq!(spec.schemas.request_context.unwrap()["required"], json!(["root"]));
        let bg = spec.policy.background.unwrap();
        assert_eq!((bg.enabled, bg.timeout_ms, bg.max_retries), (true, Some(30000), Some(2)));
    }
}
