// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
//! tokio-echo: the Tokio peer of the echo server comparison (issue #16,
//! bench/compare/echo.sh), the way a Tokio user writes one: a multi-thread
//! runtime of `--workers` worker threads and one task per connection.
//!
//! Usage: `tokio-echo [--port P] [--workers N]`
//!
//! It listens on 127.0.0.1:P (0: an ephemeral port), prints `PORT <n>` on
//! stdout and serves until SIGTERM or SIGINT, then exits 0. Each connection
//! reads whatever has arrived and writes it back with `write_all` (a task
//! whose peer reads slowly waits on its own socket, nobody else's), and ends
//! on EOF. `--job` (a fork/join job in the same process) is not supported:
//! exit 2, as for a usage error.

use std::io::Write;
use std::process::exit;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn usage(msg: &str) -> ! {
    if !msg.is_empty() {
        eprintln!("tokio-echo: {}", msg);
    }
    eprintln!("usage: tokio-echo [--port P] [--workers N]");
    exit(2);
}

/// Echoes one connection until EOF or an error; dropping the stream closes it.
async fn echo_conn(mut s: TcpStream) {
    if s.set_nodelay(true).is_err() {
        return;
    }
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        let n = match s.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if s.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

async fn accept_loop(ln: TcpListener) {
    loop {
        match ln.accept().await {
            Ok((s, _)) => {
                tokio::spawn(echo_conn(s));
            }
            Err(e) => {
                // Out of descriptors and the like: wait a little and go on.
                eprintln!("tokio-echo: accept: {}", e);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
}

/// 1,000 connections need more than the usual 1024 descriptors.
fn raise_nofile() {
    unsafe {
        let mut rl: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) == 0 && rl.rlim_cur < rl.rlim_max {
            rl.rlim_cur = rl.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &rl);
        }
    }
}

/// Blocks SIGTERM and SIGINT in this thread, and so in every thread the
/// runtime starts after it; `wait_for_stop` then takes them with sigwait.
fn block_stop_signals() -> libc::sigset_t {
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

fn wait_for_stop(set: &libc::sigset_t) {
    let mut sig: libc::c_int = 0;
    while unsafe { libc::sigwait(set, &mut sig) } != 0 {}
}

fn main() {
    let mut port = 0u16;
    let mut workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--port" => match args.next().map(|v| v.parse::<u16>()) {
                Some(Ok(v)) => port = v,
                _ => usage("--port needs 0..65535"),
            },
            "--workers" => match args.next().map(|v| v.parse::<usize>()) {
                Some(Ok(v)) if v >= 1 => workers = v,
                _ => usage("--workers needs a positive integer"),
            },
            "--job" => usage("--job is not supported by the tokio peer (the Go peer runs it)"),
            "-h" | "--help" => usage(""),
            _ => usage(&format!("unknown option {}", a)),
        }
    }
    raise_nofile();
    let stop = block_stop_signals();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap_or_else(|e| {
            eprintln!("tokio-echo: cannot build the runtime: {}", e);
            exit(1)
        });
    let ln = rt
        .block_on(TcpListener::bind(("127.0.0.1", port)))
        .unwrap_or_else(|e| {
            eprintln!("tokio-echo: cannot listen on 127.0.0.1:{}: {}", port, e);
            exit(1)
        });
    let bound = ln.local_addr().map(|a| a.port()).unwrap_or(0);
    println!("PORT {}", bound);
    let _ = std::io::stdout().flush();
    rt.spawn(accept_loop(ln));

    wait_for_stop(&stop);
    exit(0);
}
