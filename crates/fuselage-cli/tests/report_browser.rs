//! The HTML report in a real browser: headless Chromium driven through chromedriver
//! (Debian's `chromium` and `chromium-driver`) over WebDriver. Every group is drawn, the page
//! logs no error, clicking a group's node opens its panel, the sweep chart is there with its
//! tick labels, and a screenshot is saved to `target/report-screenshot.png`. Without Chromium
//! the test says so and skips.

mod common;
use common::{fuselage, tmp};
use fantoccini::{ClientBuilder, Locator};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn which(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|n| {
        std::env::split_paths(&path)
            .map(|d| d.join(n))
            .find(|p| p.is_file())
    })
}

/// chromedriver, killed when the test ends however it ends.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn screenshot_path() -> PathBuf {
    // tests run in the crate's folder; target/ is the workspace's (or CARGO_TARGET_DIR).
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    std::fs::create_dir_all(&target).ok();
    target.join("report-screenshot.png")
}

#[test]
fn the_report_works_in_chromium() {
    let (Some(driver), Some(browser)) = (
        which(&["chromedriver"]),
        which(&["chromium", "chromium-browser", "google-chrome"]),
    ) else {
        eprintln!(
            "skipping: Chromium or chromedriver is missing (apt-get install chromium chromium-driver)"
        );
        return;
    };
    let (plan, html) = (tmp("plan.json"), tmp("report.html"));
    common::optimize_resnet18(&["--search", "optimal"], &plan);
    let o = fuselage(&[
        "report",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "128KiB",
        "--plan",
        plan.to_str().unwrap(),
        "--out",
        html.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let groups =
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&plan).unwrap())
            .unwrap()["groups"]
            .as_array()
            .unwrap()
            .len();

    let port = free_port();
    let _driver = Driver(
        Command::new(&driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts"),
    );
    let url = format!("file://{}", html.canonicalize().unwrap().display());
    let shot = screenshot_path();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "binary": browser,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1400,1600"],
            }),
        );
        // chromedriver takes a moment to listen.
        let mut client = None;
        for _ in 0..50 {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            match ClientBuilder::new(connector)
                .capabilities(caps.clone())
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
            {
                Ok(c) => {
                    client = Some(c);
                    break;
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        }
        let c = client.expect("a WebDriver session with chromedriver");
        c.goto(&url).await.unwrap();
        // Every group is drawn: the distinct data-group values of the drawing's nodes.
        let drawn = c
            .execute(
                "return new Set(Array.from(document.querySelectorAll('#drawing g.node')).map(n => n.dataset.group)).size",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(drawn.as_u64(), Some(groups as u64), "groups drawn");
        let rows = c.find_all(Locator::Css("#groups tbody tr")).await.unwrap();
        assert_eq!(rows.len(), groups);
        // Clicking a node of group 3 opens group 3's panel.
        let node = c
            .find(Locator::Css("#drawing g.node[data-group='3']"))
            .await
            .unwrap();
        node.click().await.unwrap();
        let panel = c.find(Locator::Id("panel")).await.unwrap();
        assert!(panel.is_displayed().await.unwrap(), "the panel opens");
        assert_eq!(panel.attr("data-group").await.unwrap().as_deref(), Some("3"));
        let text = panel.text().await.unwrap();
        assert!(text.contains("Group 3") && text.contains("Cost terms"), "{text}");
        // Sorting by DRAM keeps every row.
        c.find(Locator::Css("#groups th[data-k='dram_bytes']"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        assert_eq!(c.find_all(Locator::Css("#groups tbody tr")).await.unwrap().len(), groups);
        // The sweep chart, SVG made in Rust, is in the page's DOM with its labels.
        let labels = c
            .execute(
                "return Array.from(document.querySelectorAll('#sweep svg text.x-tick, #sweep svg text.beta-label')).map(t => t.textContent)",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(
            labels,
            serde_json::json!([
                "16 KiB", "32 KiB", "64 KiB", "128 KiB", "256 KiB", "512 KiB", "β = 128 KiB"
            ])
        );
        let errors = c.execute("return window.fuselageErrors", vec![]).await.unwrap();
        assert_eq!(errors, serde_json::json!([]), "console errors");
        let png = c.screenshot().await.unwrap();
        std::fs::write(&shot, &png).unwrap();
        eprintln!("screenshot: {}", shot.display());
        c.close().await.unwrap();
    });
    assert!(std::fs::metadata(screenshot_path()).unwrap().len() > 10_000);
}
