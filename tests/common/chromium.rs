//! Headless Chromium for the tests that check what a person sees in a report.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::{available, text};

pub struct Rendered {
    pub png: Vec<u8>,
    pub dom: String,
    pub console: Vec<String>,
}

/// Renders a page in headless Chromium twice: a screenshot, and the DOM after the page's script
/// ran, with every console message Chromium logs. None when Chromium is not installed (a
/// failure under CI=1).
pub fn render(html: &Path, fragment: &str) -> Option<Rendered> {
    if !available("chromium", "/usr/bin/chromium") {
        return None;
    }
    let profile = tempfile::tempdir().unwrap();
    let png = profile.path().join("shot.png");
    let url = format!("file://{}{fragment}", html.display());
    let chrome = |extra: &[String]| -> Output {
        // Output goes to files: a DOM dump is larger than a pipe holds while we wait.
        let (out_path, err_path) = (profile.path().join("out"), profile.path().join("err"));
        let mut c = Command::new("/usr/bin/chromium");
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            &format!("--user-data-dir={}", profile.path().join("p").display()),
            "--window-size=1400,2400",
        ])
        .args(extra)
        .arg(&url)
        .stdout(Stdio::from(std::fs::File::create(&out_path).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&err_path).unwrap()));
        let mut child = c.spawn().expect("chromium starts");
        let start = Instant::now();
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if start.elapsed() > Duration::from_secs(120) {
                let _ = child.kill();
                panic!("chromium did not finish in 120 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        Output {
            status,
            stdout: std::fs::read(&out_path).unwrap(),
            stderr: std::fs::read(&err_path).unwrap(),
        }
    };
    let shot = chrome(&[format!("--screenshot={}", png.display())]);
    assert!(shot.status.success(), "{}", text(&shot));
    let dump = chrome(&["--dump-dom".to_string()]);
    assert!(dump.status.success(), "{}", text(&dump));
    let console = [&shot, &dump]
        .iter()
        .flat_map(|o| {
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .filter(|l| l.contains("CONSOLE"))
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .collect();
    Some(Rendered {
        png: std::fs::read(&png).expect("a screenshot"),
        dom: String::from_utf8_lossy(&dump.stdout).into_owned(),
        console,
    })
}
