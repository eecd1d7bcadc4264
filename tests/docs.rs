//! The README and the user guide name only commands and flags fslab has.
//!
//! The rule: a command or a `--flag` is fslab's when it is on an fslab
//! invocation, and only then. Invocations are looked for in each line of a
//! fenced code block and in each inline code span (a span may wrap across
//! the lines of its paragraph). An invocation is a shell command whose first
//! word, past a `$` prompt, `sudo` and `VAR=value` words, is `fslab`; a
//! command starts at the start of its line or span and after `;`, `&&`,
//! `||`, or a lone `|` that no flag follows (`--json | --csv` is a choice,
//! `| head` a pipe). So `man fslab`, `/var/tmp/fslab` and "what a killed
//! fslab run left" name nothing. The word after `fslab` is the command: it
//! must exist (`fslab COMMAND --help` succeeds), and every flag after it
//! must be in that command's `--help`; a flag right after `fslab` is a
//! global one, checked against `fslab --help`. A placeholder in capitals
//! (`fslab COMMAND --help`) names no command and is not checked. A lone
//! `--` (the measured command's own flags follow, fio's `--rw` among them),
//! a redirection or a `#` comment hands the rest of its line to another
//! program. A code line ending in `\` goes on on the next line; an entry of
//! the command summary (a line starting with `fslab` at its first column)
//! goes on on the indented lines below it, each a line of its own, so
//! `fslab exec -- CMD...` still has its flags checked below it. Flags with
//! no `fslab` before them in the same command (`--progress json` in prose,
//! apt's `--no-remove`, cargo's `--test`, mkfs's `-O`) are not checked: the
//! text around them says whose they are.

use std::collections::BTreeMap;
use std::process::Command;

/// What one fslab invocation names: its command (`None` for a global flag
/// such as `fslab --version`) and the flags after it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Named {
    command: Option<String>,
    flags: Vec<String>,
}

/// A piece of text that may hold fslab invocations, with the line it
/// starts on.
struct Piece {
    line: usize,
    text: String,
}

/// The pieces of a markdown document: each code line (with its
/// continuations) and each inline code span.
fn pieces(doc: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut paragraph: Vec<(usize, &str)> = Vec::new();
    let mut open: Option<(Piece, bool)> = None; // (piece, is a summary entry)
    for (i, line) in doc.lines().enumerate() {
        let n = i + 1;
        if line.trim_start().starts_with("```") {
            out.extend(open.take().map(|(p, _)| p));
            spans(&paragraph, &mut out);
            paragraph.clear();
            fenced = !fenced;
            continue;
        }
        if !fenced {
            if line.trim().is_empty() {
                spans(&paragraph, &mut out);
                paragraph.clear();
            } else {
                paragraph.push((n, line));
            }
            continue;
        }
        if let Some((piece, summary)) = open.as_mut() {
            let goes_on = piece.text.trim_end().ends_with('\\')
                || (*summary && line.starts_with(char::is_whitespace) && !line.trim().is_empty());
            if goes_on {
                piece.text = match piece.text.trim_end().strip_suffix('\\') {
                    Some(one_line) => format!("{one_line} {}", line.trim()),
                    None => format!("{}\n{}", piece.text, line.trim()),
                };
                continue;
            }
            out.extend(open.take().map(|(p, _)| p));
        }
        let piece = Piece { line: n, text: line.to_string() };
        let summary = line.starts_with("fslab ");
        if summary || line.trim_end().ends_with('\\') {
            open = Some((piece, summary));
        } else {
            out.push(piece);
        }
    }
    out.extend(open.map(|(p, _)| p));
    spans(&paragraph, &mut out);
    out
}

/// The inline code spans of one paragraph (its lines joined by spaces).
fn spans(paragraph: &[(usize, &str)], out: &mut Vec<Piece>) {
    let Some(&(first, _)) = paragraph.first() else {
        return;
    };
    let text = paragraph.iter().map(|(_, l)| *l).collect::<Vec<_>>().join(" ");
    for (i, span) in text.split('`').enumerate() {
        if i % 2 == 1 {
            out.push(Piece { line: first, text: span.to_string() });
        }
    }
}

/// Whether a word starts another shell command (`;`, `&&`, `||`; a lone
/// `|` is one unless a flag follows it, see [`invocations`]).
fn separates(word: &str) -> bool {
    matches!(word, ";" | "&&" | "||")
}

/// Whether a word hands the rest of its command to another program or to
/// no one: the measured command after `--`, a redirection, a comment.
fn hands_over(word: &str) -> bool {
    word == "--" || word.starts_with(['#', '>', '<']) || word.starts_with("2>")
}

/// The `--flag` a word holds, if any (`[--cache` gives `--cache`,
/// `--fill=80%` gives `--fill`).
fn flag_in(word: &str) -> Option<String> {
    let word = word.trim_start_matches(['[', '(', '{']);
    let rest = word.strip_prefix("--")?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
        .collect();
    (!name.is_empty() && name.starts_with(|c: char| c.is_ascii_lowercase())).then(|| format!("--{name}"))
}

/// Every fslab invocation in a piece of text, by the rule above: a shell
/// command (the piece's start, or after a separator) whose first word, past
/// a `$` prompt, `sudo` and `VAR=value` words, is `fslab`.
fn invocations(text: &str) -> Vec<Named> {
    let text = text.replace(';', " ; ").replace('\n', " \n ");
    // A `|` inside a word (`blocks|bytes`, `...|--dir`) is a choice, not a pipe.
    let words: Vec<&str> = text
        .split([' ', '\t'])
        .filter(|w| !w.is_empty())
        .flat_map(|w| if w == "|" { vec![w] } else { w.split('|').filter(|p| !p.is_empty()).collect() })
        .collect();
    let mut out: Vec<Named> = Vec::new();
    let mut at_start = true; // the next word may start a command
    let mut in_fslab = false; // the words are an fslab invocation's
    let mut command_next = false; // the next word is that invocation's command
    let mut handed = false; // the rest of this line is another program's
    for (i, &word) in words.iter().enumerate() {
        if word == "\n" {
            handed = false;
            continue;
        }
        if handed {
            continue;
        }
        let pipe = word == "|" && !words.get(i + 1).is_some_and(|w| w.starts_with("--"));
        if separates(word) || pipe {
            (at_start, in_fslab, command_next) = (true, false, false);
            continue;
        }
        if at_start {
            if matches!(word, "$" | "sudo" | "(" | "$(") || (word.contains('=') && !word.starts_with('-')) {
                continue;
            }
            at_start = false;
            if word == "fslab" {
                (in_fslab, command_next) = (true, true);
                out.push(Named { command: None, flags: Vec::new() });
            }
            continue;
        }
        if !in_fslab {
            continue;
        }
        if hands_over(word) {
            handed = true;
            continue;
        }
        if command_next {
            command_next = false;
            let name = word.trim_end_matches([',', '.', ':', ')']);
            if !word.starts_with('-') {
                if name.starts_with(|c: char| c.is_ascii_lowercase())
                    && name.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                {
                    out.last_mut().expect("pushed").command = Some(name.to_string());
                } else {
                    // A placeholder (`COMMAND`), a version, a path: nothing to check.
                    out.pop();
                    in_fslab = false;
                }
                continue;
            }
        }
        if let Some(flag) = flag_in(word) {
            out.last_mut().expect("pushed").flags.push(flag);
        }
    }
    out
}

/// The real binary's help, per command (`""` for the top level), or its
/// error when the command does not exist.
struct Helps(BTreeMap<String, Result<String, String>>);

impl Helps {
    fn new() -> Helps {
        Helps(BTreeMap::new())
    }

    fn of(&mut self, command: &str) -> &Result<String, String> {
        self.0.entry(command.to_string()).or_insert_with(|| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_fslab"));
            if !command.is_empty() {
                cmd.arg(command);
            }
            let out = cmd.arg("--help").output().expect("fslab runs");
            if out.status.success() {
                Ok(String::from_utf8_lossy(&out.stdout).into_owned())
            } else {
                Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
            }
        })
    }
}

/// Whether a help text lists a flag as a whole word.
fn lists(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(at, _)| {
        !help[at + flag.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-')
    })
}

/// What a document names that fslab does not have, a line each.
fn problems(name: &str, doc: &str, helps: &mut Helps) -> Vec<String> {
    let mut out = Vec::new();
    for piece in pieces(doc) {
        for named in invocations(&piece.text) {
            let command = named.command.clone().unwrap_or_default();
            let shown = if command.is_empty() { "fslab".to_string() } else { format!("fslab {command}") };
            match helps.of(&command) {
                Err(e) => out.push(format!("{name}:{}: `{shown}` is no command: {e}", piece.line)),
                Ok(help) => {
                    for flag in named.flags.iter().filter(|f| !lists(help, f)) {
                        out.push(format!("{name}:{}: `{shown}` has no {flag} (`{shown} --help`)", piece.line));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn the_readme_and_the_guide_name_only_commands_and_flags_fslab_has() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut helps = Helps::new();
    let mut found = Vec::new();
    let mut invocations_seen = 0;
    for name in ["README.md", "docs/guide.md"] {
        let doc = std::fs::read_to_string(format!("{root}/{name}")).expect(name);
        invocations_seen += pieces(&doc).iter().map(|p| invocations(&p.text).len()).sum::<usize>();
        found.extend(problems(name, &doc, &mut helps));
    }
    assert!(invocations_seen > 50, "only {invocations_seen} fslab invocations found: is the scan right?");
    assert!(found.is_empty(), "the docs name what fslab does not have:\n{}", found.join("\n"));
}

#[test]
fn a_made_up_flag_or_command_is_caught_and_other_tools_flags_are_left_alone() {
    let doc = "\
Run `sudo fslab map --no-such-flag FILE` or `fslab frobnicate`.
Give mkfs `-O ^has_journal`, apt `--no-remove`, and
`cargo test --test docs`; `fslab run --preset seeds
--made-up-wrapped` wraps.

```
$ sudo fslab exec --fs ext4 -- fio --rw=write --output-format=json
$ fslab frag --top 3 /usr | head --lines 3
fslab export RUN      a stored run as a file      --json | --csv  [-o FILE]
                      [--not-an-export-flag]
$ fslab compare a b \\
      --all --no-such-compare-flag   # --comment-flag
fslab --version       fslab 0.1.0
fslab exec -- CMD...  CMD measured on scratch file systems
                      [--fs LIST | --dir PATH] [--not-an-exec-flag]
```
";
    let mut helps = Helps::new();
    let found = problems("made-up.md", doc, &mut helps);
    let expected = [
        "made-up.md:1: `fslab map` has no --no-such-flag (`fslab map --help`)",
        "made-up.md:1: `fslab frobnicate` is no command",
        "made-up.md:1: `fslab run` has no --made-up-wrapped (`fslab run --help`)",
        "made-up.md:9: `fslab export` has no --not-an-export-flag (`fslab export --help`)",
        "made-up.md:11: `fslab compare` has no --no-such-compare-flag (`fslab compare --help`)",
        "made-up.md:14: `fslab exec` has no --not-an-exec-flag (`fslab exec --help`)",
    ];
    for line in expected {
        assert!(found.iter().any(|f| f.starts_with(line)), "{line:?} not in:\n{}", found.join("\n"));
    }
    assert_eq!(found.len(), expected.len(), "only the made-up names are caught:\n{}", found.join("\n"));
}

#[test]
fn the_rule_reads_commands_flags_and_where_an_invocation_ends() {
    let named = |c: Option<&str>, f: &[&str]| Named {
        command: c.map(str::to_string),
        flags: f.iter().map(|s| s.to_string()).collect(),
    };
    assert_eq!(
        invocations("fslab exec [--fs ...|--dir PATH] -- fio --rw=write"),
        vec![named(Some("exec"), &["--fs", "--dir"])]
    );
    assert_eq!(invocations("man fslab"), vec![]);
    assert_eq!(
        invocations("fslab cleanup   release what a killed fslab run left   [--json]"),
        vec![named(Some("cleanup"), &["--json"])]
    );
    assert_eq!(invocations("FSLAB_STORE=x sudo fslab runs --tag a"), vec![named(Some("runs"), &["--tag"])]);
    assert_eq!(invocations("fslab COMMAND --help"), vec![]);
    assert_eq!(invocations("fslab --version"), vec![named(None, &["--version"])]);
    assert_eq!(
        invocations("fslab runs; fslab show last --json"),
        vec![named(Some("runs"), &[]), named(Some("show"), &["--json"])]
    );
}

#[test]
fn the_readme_stays_short_and_names_what_the_scripts_install() {
    // The long form lives in docs/; the README is read whole.
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines < 400, "README.md has {lines} lines; move the long form into docs/");
    // Every package setup.sh may install is named, in backticks or as QEMU.
    let setup = std::fs::read_to_string(format!("{root}/scripts/setup.sh")).unwrap();
    let packages: std::collections::BTreeSet<&str> =
        setup.split("need+=(").skip(1).filter_map(|rest| rest.split(')').next()).collect();
    assert!(packages.len() > 15, "only {packages:?} found in setup.sh: is the scan right?");
    let missing: Vec<_> = packages.iter().filter(|p| !readme.contains(&format!("`{p}`"))).collect();
    assert!(missing.is_empty(), "README.md does not name {missing:?}, which scripts/setup.sh installs");
}
