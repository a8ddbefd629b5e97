//! How components are compiled: the settings every compiled artefact is
//! made with, Cranelift's function cache for one load, and where a load
//! compiles: on this process's blocking pool, or in a child process of its
//! own that ends with the load (ADR 0058).
//!
//! **Why a child process.** Compiling is the one time toolhost holds a lot
//! of memory: Cranelift's working memory, its reusable contexts, the
//! allocator's arenas of every compiling thread and the compiler's own
//! code pages. A process keeps most of that after the compilations end,
//! so a first start left a server holding over 1.5× a warm start's
//! memory. A child process gives all of it back when it exits, and it
//! makes two promises in-process compiling could not: a compilation given
//! up on (`limits.compile_timeout_secs`) stops for real when the load ends,
//! and a compiler that crashes on a hostile component takes down the
//! child, not the gateway. Nor its neighbours: the other compilations a
//! crashed child held are each tried again in a child of their own, so
//! only the component that ends its compiler is refused (ADR 0061).
//!
//! **The child** is toolhost's own binary (`toolhost compile-worker`, never
//! typed by hand), so it compiles with exactly these settings; wasmtime
//! checks that the artefacts it returns match the serving engine anyway.
//! It reads frames on stdin and answers on stdout:
//!
//! - a request: the request's number (`u64`, little-endian), the
//!   component's length (`u64`) and its bytes;
//! - an answer: the request's number, `0` (compiled) or `1` (not), the
//!   length of what follows (`u64`) and the artefact or the error's text.
//!
//! It marks itself the first process the kernel ends when memory runs out
//! (`oom_score_adj` 1000), so a component made to exhaust the compiler
//! costs the child, not the gateway; with `--memory-mib` (toolhost passes
//! `host.compile_memory_mib`) it may allocate no more than that, so such a
//! component fails at that bound instead of taking the machine's memory
//! first, and it dumps no core ([`limit_memory`], ADR 0062).
//!
//! It compiles each request on a thread of its own, sharing one
//! [`FunctionCache`] among them, as a load in this process does; the
//! parent holds the load's compile turns, so at most that many run at once.
//! It ends when its stdin closes, after answering what it was sent.
//!
//! **Architecture invariant:** the bottom of the runtime: it names no other
//! module of the crate.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wasmtime::{Config, Engine};

/// Most bytes of compiled functions a [`FunctionCache`] holds; past them
/// new functions are compiled and not kept.
pub const FUNCTION_CACHE_BYTES: usize = 64 << 20;

/// How long a request that could not be written waits for the child's
/// reader to say how the child ended.
const ENDING_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Largest component or artefact one frame of the child's protocol
/// carries: a frame that claims more is a broken peer, not a component.
const MAX_FRAME_BYTES: u64 = 1 << 30;

/// The settings components are compiled with, in this process or in the
/// child, with `functions` as Cranelift's function cache. The serving
/// engine adds its instance pool to them ([`crate::engine::Runtime::new`]).
pub fn compiling_config(functions: Arc<FunctionCache>) -> anyhow::Result<Config> {
    let mut config = Config::new();
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    config.parallel_compilation(true);
    // Compiled code keeps neither a map from native addresses back to
    // wasm offsets nor native unwind tables: a trap's backtrace still
    // names the guest's functions (wasmtime walks frame pointers), and
    // nothing here unwinds natively through guest frames. Together they
    // were a fifth of each compiled component, resident as long as it is
    // served (ADR 0055).
    config.generate_address_map(false);
    config.native_unwind_info(false);
    config
        .enable_incremental_compilation(functions)
        .map_err(anyhow::Error::from)
        .context("cannot configure the WebAssembly engine's function cache")?;
    Ok(config)
}

/// Cranelift's incremental compilation cache, in memory, for one load:
/// a function whose body (its IR, whatever functions it calls) and
/// target flags were compiled before in this load is copied instead of
/// compiled again. Components built with one toolchain share much of
/// their code (the standard library, the bindings' glue), and copies of
/// one component built with different settings share nearly all of it,
/// so a first start that compiles many components compiles each shared
/// function once.
///
/// Entries are keyed by Cranelift's SHA-256 of the function and the
/// target flags, so one component's code can only be reused for a
/// function identical to it: what a component runs is what its own
/// bytes compile to. Held only in memory, never on disk (the compile
/// cache keeps whole components), and emptied by [`FunctionCache::clear`]
/// once a load ends, so its memory goes back.
#[derive(Debug, Default)]
pub struct FunctionCache {
    entries: Mutex<FunctionEntries>,
}

#[derive(Debug, Default)]
struct FunctionEntries {
    by_key: HashMap<Vec<u8>, Vec<u8>>,
    bytes: usize,
    reused: usize,
}

impl FunctionCache {
    /// Forgets every function (the end of a load).
    pub fn clear(&self) {
        *self.entries.lock().expect("not poisoned") = FunctionEntries::default();
    }

    /// How many functions it holds.
    pub fn len(&self) -> usize {
        self.entries.lock().expect("not poisoned").by_key.len()
    }

    /// Whether it holds no function.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many functions were copied from it instead of compiled since
    /// the last [`FunctionCache::clear`].
    pub fn reused(&self) -> usize {
        self.entries.lock().expect("not poisoned").reused
    }
}

impl wasmtime::CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<std::borrow::Cow<'_, [u8]>> {
        let mut entries = self.entries.lock().expect("not poisoned");
        let value = entries.by_key.get(key).cloned()?;
        entries.reused += 1;
        Some(std::borrow::Cow::Owned(value))
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let mut entries = self.entries.lock().expect("not poisoned");
        let size = key.len() + value.len();
        if entries.bytes + size > FUNCTION_CACHE_BYTES {
            return false;
        }
        entries.bytes += size;
        entries.by_key.insert(key.to_vec(), value);
        true
    }
}

/// Where a load compiles its components.
#[derive(Clone, Debug, Default)]
pub enum CompileIn {
    /// On this process's blocking pool, with an engine made for the load
    /// and dropped when it ends (ADR 0056). What an embedder without a
    /// compile worker gets, and the in-process tests.
    #[default]
    ThisProcess,
    /// In a child process, one per load, running `program` with `args`:
    /// a program that serves the protocol in the module doc, such as
    /// toolhost's `compile-worker` ([`serve_compilations`]).
    ChildProcess {
        /// The program.
        program: PathBuf,
        /// Its arguments.
        args: Vec<OsString>,
    },
}

impl CompileIn {
    /// A child running this process's own program with `args` (on Linux
    /// `/proc/self/exe`, which still names this program after an upgrade
    /// replaced its file on disk, so the child always matches the engine).
    pub fn this_program(args: &[&str]) -> anyhow::Result<CompileIn> {
        let program = if cfg!(target_os = "linux") {
            PathBuf::from("/proc/self/exe")
        } else {
            std::env::current_exe().context("cannot find this program to compile in a child")?
        };
        Ok(CompileIn::ChildProcess {
            program,
            args: args.iter().map(OsString::from).collect(),
        })
    }
}

/// Why a component did not compile.
#[derive(Debug, thiserror::Error)]
pub enum CompileFailure {
    /// wasmtime refused or failed to compile it.
    #[error("{0}")]
    Compiler(String),
    /// The child process could not be used: it did not start, or it ended
    /// before answering.
    #[error("{0}")]
    Child(String),
}

/// The settings of the engine components are compiled with, where they
/// are compiled, and, while a load lasts, what compiles them: an engine of
/// this process or a child process.
pub struct Compiler {
    config: Config,
    place: Mutex<CompileIn>,
    current: Mutex<Option<LoadCompiler>>,
}

/// What compiles the current load's components.
enum LoadCompiler {
    /// An engine of this process.
    Engine(Engine),
    /// A child process.
    Child(Arc<ChildCompiler>),
}

impl Compiler {
    /// A compiler with the settings of `config` (the serving engine's,
    /// without its instance pool), compiling in this process until told
    /// otherwise ([`Compiler::compile_in`]).
    pub fn new(config: Config) -> Compiler {
        Compiler {
            config,
            place: Mutex::new(CompileIn::ThisProcess),
            current: Mutex::new(None),
        }
    }

    /// Compiles from now on in `place` (from the next load on).
    pub fn compile_in(&self, place: CompileIn) {
        *self.place.lock().expect("not poisoned") = place;
    }

    /// The engine to compile with in this process during the current load:
    /// made at its first compile (a load whose every component is in the
    /// compile cache makes none), with the serving engine's settings, so
    /// what it compiles deserialises into the serving engine. Kept apart
    /// because wasmtime keeps each engine's compiler state (its reusable
    /// contexts) for as long as the engine lives: [`Compiler::end_load`]
    /// drops it, and that memory goes back.
    pub fn engine(&self) -> wasmtime::Result<Engine> {
        let mut current = self.current.lock().expect("not poisoned");
        if let Some(LoadCompiler::Engine(engine)) = current.as_ref() {
            return Ok(engine.clone());
        }
        // The serving engine was built from the same settings, so this
        // fails only as that one would have.
        let made = Engine::new(&self.config)?;
        *current = Some(LoadCompiler::Engine(made.clone()));
        Ok(made)
    }

    /// Compiles `bytes` to a serialised artefact for the serving engine,
    /// where this load compiles. `abandoned` is set once nobody waits for
    /// the answer any more (a compile timeout): [`Compiler::end_load`]
    /// stops a child whose every compilation was abandoned.
    pub async fn precompile(
        &self,
        bytes: Arc<Vec<u8>>,
        abandoned: Arc<AtomicBool>,
    ) -> Result<Vec<u8>, CompileFailure> {
        let place = self.place.lock().expect("not poisoned").clone();
        match place {
            CompileIn::ThisProcess => {
                let engine = self
                    .engine()
                    .map_err(|e| CompileFailure::Compiler(format!("{e:#}")))?;
                tokio::task::spawn_blocking(move || engine.precompile_component(&bytes))
                    .await
                    .map_err(|e| CompileFailure::Compiler(e.to_string()))?
                    .map_err(|e| CompileFailure::Compiler(format!("{e:#}")))
            }
            CompileIn::ChildProcess { program, args } => {
                let child = self.child(&program, &args)?;
                let (answer, retry) = child.compile(&bytes, abandoned.clone()).await;
                match retry {
                    None => answer,
                    // The child had ended before this was sent: once more,
                    // in the load's next child.
                    Some(Retry::Anew) => {
                        let child = self.child(&program, &args)?;
                        child.compile(&bytes, abandoned).await.0
                    }
                    // The child ended with other compilations in it, and
                    // any of them may have ended it: this one compiles
                    // again in a child of its own, so that only a
                    // component that ends its compiler fails.
                    Some(Retry::Alone) => {
                        let alone = ChildCompiler::start(&program, &args)?;
                        alone.compile(&bytes, abandoned).await.0
                    }
                }
            }
        }
    }

    /// The current load's child, started if there is none or the last one
    /// ended.
    fn child(
        &self,
        program: &Path,
        args: &[OsString],
    ) -> Result<Arc<ChildCompiler>, CompileFailure> {
        let mut current = self.current.lock().expect("not poisoned");
        if let Some(LoadCompiler::Child(child)) = current.as_ref()
            && !child.ended()
        {
            return Ok(child.clone());
        }
        let child = Arc::new(ChildCompiler::start(program, args)?);
        *current = Some(LoadCompiler::Child(child.clone()));
        Ok(child)
    }

    /// The end of a load: drops its compiling engine (once the
    /// compilations still holding it end), or ends its child: at once when
    /// nothing it compiles is still waited for, otherwise once those
    /// compilations are answered.
    pub fn end_load(&self) {
        let ended = self.current.lock().expect("not poisoned").take();
        if let Some(LoadCompiler::Child(child)) = ended {
            child.stop_if_abandoned();
        }
    }
}

/// Answers waited for, by request number.
#[derive(Default)]
struct Pending {
    /// Each request's answer channel, and whether it was abandoned.
    waiting: HashMap<u64, (tokio::sync::oneshot::Sender<Answer>, Arc<AtomicBool>)>,
    /// Why the child can no longer answer, once it cannot.
    ended: Option<String>,
    /// When the child ended on its own (it crashed, or broke the
    /// protocol): how many compilations it still held.
    held_at_end: usize,
}

/// Why a compilation the child failed is worth another try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retry {
    /// The child had ended before the component was sent.
    Anew,
    /// The child ended on its own while compiling this component and at
    /// least one other: which of them ended it is not known.
    Alone,
}

/// A child's answer to one request.
type Answer = Result<Vec<u8>, CompileFailure>;

/// One load's child process: requests are written to its stdin, a task
/// reads its answers and hands each to whoever waits for it. Dropping it
/// (or [`ChildCompiler::stop`]) kills the child.
struct ChildCompiler {
    stdin: tokio::sync::Mutex<tokio::process::ChildStdin>,
    pending: Arc<Mutex<Pending>>,
    next: AtomicU64,
    /// Reads the answers; owns the child, killed when the task is aborted.
    reader: tokio::task::JoinHandle<()>,
}

impl ChildCompiler {
    /// Starts `program` with `args` and an empty environment, its stdin
    /// and stdout piped to this process, its stderr this process's (a
    /// panic in it reaches the log).
    fn start(program: &Path, args: &[OsString]) -> Result<ChildCompiler, CompileFailure> {
        let mut child = tokio::process::Command::new(program)
            .args(args)
            // Nothing of this process's environment: it may hold the
            // credentials the config reads (`${VAR}`), which compiling
            // never needs.
            .env_clear()
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                CompileFailure::Child(format!(
                    "cannot start the compiling process {}: {e}",
                    program.display()
                ))
            })?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let pending = Arc::new(Mutex::new(Pending::default()));
        let reader = tokio::spawn(read_answers(child, stdout, pending.clone()));
        Ok(ChildCompiler {
            stdin: tokio::sync::Mutex::new(stdin),
            pending,
            next: AtomicU64::new(0),
            reader,
        })
    }

    /// Whether the child can no longer answer.
    fn ended(&self) -> bool {
        self.pending.lock().expect("not poisoned").ended.is_some()
    }

    /// Sends `bytes` to be compiled and waits for the artefact; with a
    /// failure of the child, whether the compilation is worth another try
    /// ([`Retry`]).
    async fn compile(&self, bytes: &[u8], abandoned: Arc<AtomicBool>) -> (Answer, Option<Retry>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = tokio::sync::oneshot::channel();
        {
            let mut pending = self.pending.lock().expect("not poisoned");
            if let Some(why) = &pending.ended {
                return (Err(CompileFailure::Child(why.clone())), Some(Retry::Anew));
            }
            pending.waiting.insert(id, (answer, abandoned.clone()));
        }
        let written = {
            let mut stdin = self.stdin.lock().await;
            write_request(&mut stdin, id, bytes).await
        };
        let answer = if let Err(e) = written {
            // A child that ended is reported by its reader with how it
            // ended, which says more than the broken pipe; one that lives
            // on without reading is of no use, and is stopped.
            match tokio::time::timeout(ENDING_WAIT, answered).await {
                Ok(Ok(answer)) => answer,
                _ => {
                    self.stop();
                    Err(CompileFailure::Child(format!(
                        "cannot send the component to the compiling process: {e}"
                    )))
                }
            }
        } else {
            answered.await.unwrap_or_else(|_| {
                Err(CompileFailure::Child(
                    "the compiling process was stopped before it answered".into(),
                ))
            })
        };
        let shared_an_end = matches!(answer, Err(CompileFailure::Child(_)))
            && !abandoned.load(Ordering::Relaxed)
            && self.pending.lock().expect("not poisoned").held_at_end > 1;
        (answer, shared_an_end.then_some(Retry::Alone))
    }

    /// Kills the child now if nobody waits for any of its answers;
    /// otherwise it ends when the last holder of it is done with it.
    fn stop_if_abandoned(&self) {
        let all_abandoned = self
            .pending
            .lock()
            .expect("not poisoned")
            .waiting
            .values()
            .all(|(_, abandoned)| abandoned.load(Ordering::Relaxed));
        if all_abandoned {
            self.stop();
        }
    }

    /// Kills the child; what it was compiling is answered as stopped.
    fn stop(&self) {
        self.reader.abort();
        let mut pending = self.pending.lock().expect("not poisoned");
        pending
            .ended
            .get_or_insert_with(|| "the compiling process was stopped at the load's end".into());
        pending.waiting.clear();
    }
}

impl Drop for ChildCompiler {
    fn drop(&mut self) {
        // Aborting the reader drops the child, which kills it.
        self.reader.abort();
    }
}

/// Writes one request frame.
async fn write_request(
    stdin: &mut tokio::process::ChildStdin,
    id: u64,
    bytes: &[u8],
) -> std::io::Result<()> {
    let mut head = [0u8; 16];
    head[..8].copy_from_slice(&id.to_le_bytes());
    head[8..].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
    stdin.write_all(&head).await?;
    stdin.write_all(bytes).await?;
    stdin.flush().await
}

/// Reads the child's answers until it ends, then fails whatever still
/// waits, saying how it ended.
async fn read_answers(
    mut child: tokio::process::Child,
    mut stdout: tokio::process::ChildStdout,
    pending: Arc<Mutex<Pending>>,
) {
    let why = loop {
        match read_answer(&mut stdout).await {
            Ok(Some((id, answer))) => {
                let waiter = pending.lock().expect("not poisoned").waiting.remove(&id);
                if let Some((answer_to, _)) = waiter {
                    let _ = answer_to.send(answer);
                }
            }
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    let (status, aborted) = match child.wait().await {
        Ok(status) => (status.to_string(), aborted(status)),
        Err(e) => (format!("its status unknown: {e}"), false),
    };
    let why = match why {
        Some(e) => {
            format!("the compiling process sent an unreadable answer ({e}) and ended: {status}")
        }
        None if aborted => format!(
            "the compiling process ended before it answered: {status}; it aborts when a \
             compilation needs more memory than it may allocate (host.compile_memory_mib)"
        ),
        None => format!("the compiling process ended before it answered: {status}"),
    };
    let mut pending = pending.lock().expect("not poisoned");
    pending.ended.get_or_insert(why.clone());
    pending.held_at_end = pending.waiting.len();
    for (_, (answer_to, _)) in pending.waiting.drain() {
        let _ = answer_to.send(Err(CompileFailure::Child(why.clone())));
    }
}

/// Whether a child ended with `SIGABRT`: what an allocation past its
/// memory limit ends it with.
fn aborted(status: std::process::ExitStatus) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status.signal() == Some(rustix::process::Signal::ABORT.as_raw())
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        false
    }
}

/// One answer frame; `None` at the end of the stream between frames.
async fn read_answer(
    stdout: &mut tokio::process::ChildStdout,
) -> std::io::Result<Option<(u64, Answer)>> {
    let mut id = [0u8; 8];
    match stdout.read_exact(&mut id).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let mut kind = [0u8; 1];
    stdout.read_exact(&mut kind).await?;
    let mut length = [0u8; 8];
    stdout.read_exact(&mut length).await?;
    let length = u64::from_le_bytes(length);
    if length > MAX_FRAME_BYTES {
        return Err(std::io::Error::other(format!(
            "an answer of {length} bytes"
        )));
    }
    let mut body = vec![0u8; length as usize];
    stdout.read_exact(&mut body).await?;
    let answer = match kind[0] {
        0 => Ok(body),
        1 => Err(CompileFailure::Compiler(
            String::from_utf8_lossy(&body).into_owned(),
        )),
        other => {
            return Err(std::io::Error::other(format!("an answer of kind {other}")));
        }
    };
    Ok(Some((u64::from_le_bytes(id), answer)))
}

/// The child's side: compiles each component `input` sends, on a thread of
/// its own, and writes each answer to `output`, until `input` ends; then
/// waits for the compilations still running. What `toolhost
/// compile-worker` runs. With `memory_bytes`, this process may allocate no
/// more than that ([`limit_memory`]). Errors: the limit cannot be set, the
/// engine cannot be made, or `input` breaks off within a frame or claims
/// one larger than any component.
pub fn serve_compilations(
    input: impl Read,
    output: impl Write + Send + 'static,
    memory_bytes: Option<u64>,
) -> anyhow::Result<()> {
    first_to_go_when_memory_runs_out();
    limit_memory(memory_bytes)?;
    let functions = Arc::new(FunctionCache::default());
    let engine = Engine::new(&compiling_config(functions)?)
        .map_err(anyhow::Error::from)
        .context("cannot configure the WebAssembly engine")?;
    let output = Arc::new(Mutex::new(output));
    // What a compilation that failed for want of memory may have met.
    let limit_note: Arc<str> = match memory_bytes {
        Some(bytes) => format!(
            " (this process may allocate at most {} MiB: host.compile_memory_mib)",
            bytes >> 20
        )
        .into(),
        None => "".into(),
    };
    let mut input = BufReader::new(input);
    let mut compiling: Vec<std::thread::JoinHandle<()>> = Vec::new();
    let read = loop {
        let request = match read_request(&mut input) {
            Ok(Some(request)) => request,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        let (id, bytes) = request;
        let engine = engine.clone();
        let answers = output.clone();
        let note = limit_note.clone();
        let thread = std::thread::Builder::new()
            .name(format!("compile-{id}"))
            .spawn(move || {
                let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    engine
                        .precompile_component(&bytes)
                        .map_err(|e| format!("{e:#}"))
                }))
                .unwrap_or_else(|panic| {
                    Err(format!(
                        "the compiler panicked: {}{note}",
                        panic_text(&panic)
                    ))
                });
                let mut output = answers.lock().unwrap_or_else(|p| p.into_inner());
                // The parent gone, nobody needs the answer.
                let _ = write_answer(&mut *output, id, &compiled);
            });
        match thread {
            Ok(thread) => {
                compiling.retain(|t| !t.is_finished());
                compiling.push(thread);
            }
            Err(e) => {
                let refused = Err(format!(
                    "cannot start a thread to compile it: {e}{limit_note}"
                ));
                let mut output = output.lock().unwrap_or_else(|p| p.into_inner());
                let _ = write_answer(&mut *output, id, &refused);
            }
        }
    };
    for thread in compiling {
        let _ = thread.join();
    }
    read
}

/// Marks this process the first the kernel ends when memory runs out: a
/// component made to exhaust the compiler then costs this child, not the
/// gateway serving calls. Linux: `oom_score_adj` 1000, which any process
/// may set for itself; elsewhere, or if the file cannot be written,
/// nothing changes (said on stderr, the parent's log).
fn first_to_go_when_memory_runs_out() {
    #[cfg(target_os = "linux")]
    if let Err(e) = std::fs::write("/proc/self/oom_score_adj", "1000") {
        eprintln!("toolhost compile-worker: cannot raise its oom_score_adj: {e}");
    }
}

/// Limits this process: to `memory_bytes` of data (`RLIMIT_DATA`: its
/// heap and private writable mappings, where every compiler allocation
/// lives; wasmtime's inaccessible reservations do not count, so the limit
/// bounds memory, not address space), and to no core dump. A compilation
/// past the limit fails to allocate and aborts the process, which the
/// gateway reports for the component it was compiling; a core dump of
/// each such abort could fill the disk at every reload.
pub fn limit_memory(memory_bytes: Option<u64>) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, Rlimit, setrlimit};
        let none = Rlimit {
            current: Some(0),
            maximum: Some(0),
        };
        setrlimit(Resource::Core, none).context("cannot turn off the core dump")?;
        if let Some(bytes) = memory_bytes {
            let limit = Rlimit {
                current: Some(bytes),
                maximum: Some(bytes),
            };
            setrlimit(Resource::Data, limit)
                .with_context(|| format!("cannot limit its memory to {bytes} bytes"))?;
        }
    }
    #[cfg(not(unix))]
    let _ = memory_bytes;
    Ok(())
}

/// One request frame; `None` at the end of the stream between frames.
fn read_request(input: &mut impl Read) -> anyhow::Result<Option<(u64, Vec<u8>)>> {
    let mut head = [0u8; 16];
    let mut filled = 0;
    while filled < head.len() {
        let n = input.read(&mut head[filled..])?;
        if n == 0 {
            if filled == 0 {
                return Ok(None);
            }
            anyhow::bail!("the input ended within a request");
        }
        filled += n;
    }
    let id = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
    let length = u64::from_le_bytes(head[8..].try_into().expect("8 bytes"));
    if length > MAX_FRAME_BYTES {
        anyhow::bail!("a request of {length} bytes, more than any component");
    }
    let mut bytes = vec![0u8; length as usize];
    input
        .read_exact(&mut bytes)
        .context("the input ended within a request")?;
    Ok(Some((id, bytes)))
}

/// Writes one answer frame.
fn write_answer(
    output: &mut impl Write,
    id: u64,
    compiled: &Result<Vec<u8>, String>,
) -> std::io::Result<()> {
    let (kind, body) = match compiled {
        Ok(artifact) => (0u8, artifact.as_slice()),
        Err(text) => (1u8, text.as_bytes()),
    };
    output.write_all(&id.to_le_bytes())?;
    output.write_all(&[kind])?;
    output.write_all(&(body.len() as u64).to_le_bytes())?;
    output.write_all(body)?;
    output.flush()
}

/// A panic's message, when it has one.
fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}
