//! Chromium driven as a person drives it: a headless browser started with
//! its DevTools protocol open, tabs opened in it, a page's own elements
//! clicked and typed into, and what the page shows read back. Only what
//! tests/browser.rs needs of the protocol (Target, Runtime, Page).

use serde_json::{json, Value};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// A headless Chromium, closed (and its profile removed) when dropped.
pub struct Browser {
    child: Child,
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    next: u64,
    profile: PathBuf,
}

/// A tab: the session its commands go to.
pub struct Tab(String);

impl Browser {
    pub fn launch(chromium: &Path) -> Browser {
        static LAUNCHES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = LAUNCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let profile = std::env::temp_dir().join(format!("handshake-devtools-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&profile);
        let child = Command::new(chromium)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"])
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{} must start: {e}", chromium.display()));
        // Chromium writes the port it chose, and the browser's endpoint, here.
        let active = profile.join("DevToolsActivePort");
        let started = Instant::now();
        let said = loop {
            match std::fs::read_to_string(&active) {
                Ok(s) if s.lines().count() >= 2 => break s,
                _ if started.elapsed() > Duration::from_secs(20) => panic!("chromium opened no DevTools port in 20 s"),
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        let mut lines = said.lines();
        let (port, endpoint) = (lines.next().unwrap(), lines.next().unwrap());
        let (socket, _) = tungstenite::connect(format!("ws://127.0.0.1:{port}{endpoint}")).expect("DevTools answers");
        if let MaybeTlsStream::Plain(s) = socket.get_ref() {
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        }
        Browser { child, socket, next: 0, profile }
    }

    /// Sends `method` (to a tab's session, or the browser's) and waits for its answer.
    fn call(&mut self, tab: Option<&Tab>, method: &str, params: Value) -> Value {
        self.try_call(tab, method, params).unwrap_or_else(|e| panic!("{method}: {e}"))
    }

    /// [`call`](Self::call), or the error DevTools answered (a page that
    /// navigated while it was asked, say).
    fn try_call(&mut self, tab: Option<&Tab>, method: &str, params: Value) -> Result<Value, String> {
        self.next += 1;
        let id = self.next;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(Tab(session)) = tab {
            message["sessionId"] = json!(session);
        }
        self.socket.send(Message::text(message.to_string())).expect("DevTools takes a command");
        loop {
            let Message::Text(text) = self.socket.read().expect("DevTools answers within 30 s") else { continue };
            let v: Value = serde_json::from_str(&text).unwrap();
            if v["id"] == id {
                return if v["error"].is_null() { Ok(v["result"].clone()) } else { Err(v["error"].to_string()) };
            }
        }
    }

    /// A new tab at `url`, `width` × `height`.
    pub fn open(&mut self, url: &str, (width, height): (u32, u32)) -> Tab {
        let target = self.call(None, "Target.createTarget", json!({ "url": "about:blank" }))["targetId"].clone();
        let attached = self.call(None, "Target.attachToTarget", json!({ "targetId": target, "flatten": true }));
        let tab = Tab(attached["sessionId"].as_str().unwrap().to_string());
        let size = json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false });
        self.call(Some(&tab), "Emulation.setDeviceMetricsOverride", size);
        self.call(Some(&tab), "Page.navigate", json!({ "url": url }));
        self.wait(&tab, &format!("location.href.startsWith({:?}) && document.readyState === 'complete'", url), "loads");
        tab
    }

    /// The value of `expression` in the tab's page (a promise awaited).
    pub fn eval(&mut self, tab: &Tab, expression: &str) -> Value {
        self.try_eval(tab, expression).unwrap_or_else(|e| panic!("{expression}: {e}"))
    }

    /// [`eval`](Self::eval), or the exception it threw.
    fn try_eval(&mut self, tab: &Tab, expression: &str) -> Result<Value, String> {
        let params = json!({ "expression": expression, "awaitPromise": true, "returnByValue": true });
        let r = self.try_call(Some(tab), "Runtime.evaluate", params)?;
        match &r["exceptionDetails"] {
            Value::Null => Ok(r["result"]["value"].clone()),
            e => Err(e.to_string()),
        }
    }

    /// Waits until `condition` is true in the tab (checked every 50 ms, for
    /// at most 10 s), saying `what` if it never is. A condition that throws
    /// (the page still loading: an element not there yet), or that the page
    /// navigated away from while it was asked, is not true yet.
    pub fn wait(&mut self, tab: &Tab, condition: &str, what: &str) {
        let started = Instant::now();
        while self.try_eval(tab, &format!("!!({condition})")) != Ok(json!(true)) {
            if started.elapsed() > Duration::from_secs(10) {
                let text = self.try_eval(tab, "document.body ? document.body.innerText : ''");
                panic!("never {what} ({condition}); the page shows:\n{text:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The tab's page as a PNG, written to `path`; its size in bytes.
    pub fn screenshot(&mut self, tab: &Tab, path: &Path) -> usize {
        use base64::Engine;
        let shot = self.call(Some(tab), "Page.captureScreenshot", json!({ "format": "png" }));
        let png = base64::engine::general_purpose::STANDARD.decode(shot["data"].as_str().unwrap()).unwrap();
        std::fs::write(path, &png).unwrap();
        png.len()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.socket.close(None);
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
