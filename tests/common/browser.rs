//! Headless Chromium for the report's tests: a run with a fresh profile,
//! killed if it hangs, and the check that a page made no console message
//! and loaded nothing but itself.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const CHROMIUM: &str = "/usr/bin/chromium";

/// How long one browser run may take before it is killed.
pub const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

/// The browser, or `None` after a loud note when it is not installed and
/// not required.
pub fn browser() -> Option<Browser> {
    if Path::new(CHROMIUM).exists() {
        return Some(Browser { binary: PathBuf::from(CHROMIUM) });
    }
    if std::env::var("FSLAB_REQUIRE_BROWSER").is_ok_and(|v| v == "1") {
        panic!("report_browser: {CHROMIUM} is not installed and FSLAB_REQUIRE_BROWSER=1: install it (apt-get install chromium)");
    }
    eprintln!();
    eprintln!("################################################################");
    eprintln!("## SKIPPED report_browser: {CHROMIUM} is not installed.");
    eprintln!("## The HTML report was NOT checked in a browser.");
    eprintln!("## Install it (apt-get install chromium), or set");
    eprintln!("## FSLAB_REQUIRE_BROWSER=1 to make this a failure.");
    eprintln!("################################################################");
    eprintln!();
    None
}

/// Headless Chromium, at [`CHROMIUM`].
pub struct Browser {
    binary: PathBuf,
}

/// What one browser run printed.
pub struct Output {
    pub stdout: String,
    pub stderr: String,
}

impl Browser {
    /// A screenshot of `url` into `png`, the window `width` by `height`
    /// pixels, with the console logged to its stderr (for
    /// [`assert_no_page_errors`]).
    pub fn screenshot(&self, dir: &Path, png: &Path, url: &str, (width, height): (u32, u32)) -> Output {
        let shot = format!("--screenshot={}", png.display());
        let size = format!("--window-size={width},{height}");
        self.run(dir, "shot", &["--enable-logging=stderr", "--v=0", "--hide-scrollbars", &shot, &size, url])
    }

    /// Run headless Chromium with a new empty profile and `args`; its
    /// output goes to files (no pipe to fill up), and it is killed if it
    /// outlives [`BROWSER_TIMEOUT`].
    pub fn run(&self, dir: &Path, name: &str, args: &[&str]) -> Output {
        let profile = dir.join(format!("{name}-profile"));
        std::fs::create_dir(&profile).unwrap();
        let (stdout_path, stderr_path) = (dir.join(format!("{name}.out")), dir.join(format!("{name}.err")));
        let mut child = Command::new(&self.binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(args)
            .stdin(Stdio::null())
            .stdout(File::create(&stdout_path).unwrap())
            .stderr(File::create(&stderr_path).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", self.binary.display()));
        let deadline = Instant::now() + BROWSER_TIMEOUT;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for chromium") {
                break status;
            }
            if Instant::now() > deadline {
                // Only the process this test started, by its handle.
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "chromium ({name}) did not finish in {BROWSER_TIMEOUT:?}; killed. stderr:\n{}",
                    std::fs::read_to_string(&stderr_path).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let output = Output {
            stdout: std::fs::read_to_string(&stdout_path).unwrap(),
            stderr: std::fs::read_to_string(&stderr_path).unwrap(),
        };
        assert!(status.success(), "chromium ({name}) failed: {status}\n{}", output.stderr);
        output
    }
}

/// Chromium logs every console message of a page as `INFO:CONSOLE...]
/// "message", source: URL (line)`: script errors, `console.*` calls, and
/// the SVG parser's complaints (`Error: <rect> attribute width: A negative
/// value is not valid`). The page has no script, so any such line is an
/// error of the page. With `--v=1` (`loads_logged`) it also logs
/// `FileURLLoader::Start: URL` for every file it reads: there must be the
/// page, and nothing else (no missing image, style sheet or font).
pub fn assert_no_page_errors(stderr: &str, url: &str, loads_logged: bool) {
    let console: Vec<&str> = stderr.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "the page made console messages:\n{}", console.join("\n"));
    let failed: Vec<&str> = stderr.lines().filter(|l| l.contains(url) && l.contains("ERR_")).collect();
    assert!(failed.is_empty(), "loading the page failed:\n{}", failed.join("\n"));
    if loads_logged {
        let loads: Vec<&str> =
            stderr.lines().filter_map(|l| l.split("FileURLLoader::Start: ").nth(1)).map(str::trim).collect();
        assert!(loads.contains(&url), "the log names the page's own load (is --v=1 still logging loads?): {loads:?}");
        let others: Vec<&&str> = loads.iter().filter(|l| **l != url).collect();
        assert!(others.is_empty(), "the page loaded other files: {others:?}");
    }
}


/// How many pixels of the screenshot `png` (8-bit RGB or RGBA) have each
/// colour.
pub fn colour_counts(png: &Path) -> BTreeMap<[u8; 3], usize> {
    let decoder = png::Decoder::new(std::io::BufReader::new(File::open(png).expect("the screenshot exists")));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buffer = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buffer).expect("a frame");
    let channels = info.color_type.samples();
    let mut counts = BTreeMap::new();
    for p in buffer[..info.buffer_size()].chunks_exact(channels) {
        *counts.entry([p[0], p[1], p[2]]).or_default() += 1;
    }
    counts
}
