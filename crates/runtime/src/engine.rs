//! The shared wasmtime [`Engine`]: component model, async, pooling instance
//! allocation, and epoch interruption driven by a ticker thread.
//!
//! One engine serves every plugin. Its configuration is part of the key of
//! compiled code, so it is built in one place.
//!
//! It also holds who may run now: the pool's slots, each plugin block's
//! turns ([`BlockTurns`], [`Turn`]) and the places of calls waiting for a
//! human ([`WaitingForUser`]).
//!
//! **Architecture invariant:** the engine names only the [`compiler`](crate::compiler)
//! (the settings it shares with it), never another module of the runtime.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime::{Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::compiler::{Compiler, FunctionCache, compiling_config};

/// How often the epoch advances. A call's deadline is checked at this
/// granularity, and a guest that never calls the host yields to other tasks
/// this often.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Component instances that can exist at once (the pool's size). Calls past
/// this wait for a slot rather than fail.
pub const MAX_INSTANCES: u32 = 128;

/// Bytes of each pooled linear memory kept resident after a call (see
/// `PoolingAllocationConfig::linear_memory_keep_resident`).
pub const KEEP_RESIDENT_BYTES: usize = 2 << 20;

/// Bytes of each pooled table kept resident after a call.
pub const TABLE_KEEP_RESIDENT_BYTES: usize = 64 << 10;

/// The engine and the pool slots that gate instantiation.
#[derive(Clone)]
pub struct Runtime {
    /// The wasmtime engine.
    pub engine: Engine,
    /// One permit per pool slot; held for the life of a call's store.
    pub slots: Arc<Semaphore>,
    /// Calls waiting for a human's answer, capped below the pool size.
    pub waiting: Arc<WaitingForUser>,
    /// Each plugin block's `limits.concurrent_calls` turns.
    pub turns: Arc<BlockTurns>,
    /// Functions Cranelift compiled during the current load, shared by
    /// every component the load compiles.
    pub functions: Arc<FunctionCache>,
    /// Turns to compile: components compiled (or read from the compile
    /// cache) at once. See [`compile_permits`].
    pub compiling: Arc<Semaphore>,
    /// What compiles components, and where ([`crate::compiler`]).
    pub compiler: Arc<Compiler>,
}

/// How many components compile at once: two per core the process may run
/// on. Each compilation spreads its functions over every core
/// (`parallel_compilation`) between parts that run on one thread (reading
/// and translating the component, writing the compile cache), so two per
/// core keep every core busy. More at once only add threads and a higher
/// peak of compiler memory, which the allocator keeps afterwards: a first
/// start of 100 components held 1.9× the memory of a warm start when all
/// compiled at once, 1.3× now (ADR 0053).
pub fn compile_permits() -> usize {
    2 * std::thread::available_parallelism().map_or(1, usize::from)
}

impl Runtime {
    /// Builds the engine, with instance memory up to `max_memory_bytes`,
    /// and starts the epoch ticker.
    pub fn new(max_memory_bytes: u64) -> Result<Runtime> {
        let functions = Arc::new(FunctionCache::default());
        let mut config = compiling_config(functions.clone())?;

        // The engine components are compiled with in this process: these
        // settings without the instance pool (it never instantiates),
        // built for each load and dropped when it ends
        // ([`Compiler::engine`]).
        let compiling = config.clone();

        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(MAX_INSTANCES)
            .total_core_instances(MAX_INSTANCES * 4)
            .total_memories(MAX_INSTANCES)
            .total_tables(MAX_INSTANCES * 2)
            .total_stacks(MAX_INSTANCES)
            .max_memories_per_component(2)
            .max_memory_size(max_memory_bytes as usize)
            // A slot's first pages stay mapped between calls and are reset
            // by copying instead of `madvise`: no TLB shootdown and no page
            // faults on the next call. With `PAGEMAP_SCAN` (Linux 6.7+, used
            // when the kernel has it) only the pages the call dirtied are
            // reset. The size covers a typical Rust guest's stack, data and
            // small heap.
            .linear_memory_keep_resident(KEEP_RESIDENT_BYTES)
            .table_keep_resident(TABLE_KEEP_RESIDENT_BYTES)
            .pagemap_scan(Enabled::Auto);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));

        let engine = Engine::new(&config)
            .map_err(anyhow::Error::from)
            .context("cannot configure the WebAssembly engine")?;
        let ticker = engine.weak();
        std::thread::Builder::new()
            .name("toolhost-epoch".into())
            .spawn(move || {
                while let Some(engine) = ticker.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })
            .context("cannot start the epoch thread")?;
        Ok(Runtime {
            engine,
            slots: Arc::new(Semaphore::new(MAX_INSTANCES as usize)),
            waiting: Arc::default(),
            turns: Arc::default(),
            functions,
            compiling: Arc::new(Semaphore::new(compile_permits())),
            compiler: Arc::new(Compiler::new(compiling)),
        })
    }

    /// The end of a load: forgets the load's shared functions and ends
    /// what compiled its components (its engine, or its child process:
    /// [`Compiler::end_load`]).
    pub fn end_load(&self) {
        self.functions.clear();
        self.compiler.end_load();
    }
}

/// Most calls that may wait for a human's answer at once, host-wide: half
/// the instance pool, so calls nobody answers can never take every slot.
pub const MAX_WAITING_FOR_USER: u32 = MAX_INSTANCES / 2;

/// Counts the calls waiting for a human's answer, host-wide and per plugin
/// block. A waiting call keeps its instance (and so its pool slot) alive,
/// so the count is capped below the pool size: [`MAX_WAITING_FOR_USER`]
/// host-wide, and a block's `limits.concurrent_calls` per block. A call
/// past either cap is not queued: it ends with a retryable error.
#[derive(Debug, Default)]
pub struct WaitingForUser {
    counts: Mutex<WaitCounts>,
}

#[derive(Debug, Default)]
struct WaitCounts {
    total: u32,
    by_block: HashMap<String, u32>,
}

/// Holds one place among the calls waiting for a human; gives it back
/// when dropped.
#[derive(Debug)]
pub struct WaitingPlace {
    waits: Arc<WaitingForUser>,
    block: String,
}

impl WaitingForUser {
    /// Takes a place for a call of the plugin block `block`, whose cap is
    /// `block_cap`; `Err` says which cap is full.
    pub fn enter(self: &Arc<Self>, block: &str, block_cap: u32) -> Result<WaitingPlace, String> {
        let mut counts = self.counts.lock().expect("not poisoned");
        if counts.total >= MAX_WAITING_FOR_USER {
            return Err(format!(
                "{MAX_WAITING_FOR_USER} calls are already waiting for a user's answer, the most the host allows at once"
            ));
        }
        let of_block = counts.by_block.get(block).copied().unwrap_or(0);
        if of_block >= block_cap {
            return Err(format!(
                "{of_block} calls of plugin {block} are already waiting for a user's answer (limits.concurrent_calls = {block_cap})"
            ));
        }
        counts.total += 1;
        *counts.by_block.entry(block.to_string()).or_default() += 1;
        Ok(WaitingPlace {
            waits: self.clone(),
            block: block.to_string(),
        })
    }

    /// How many calls are waiting now.
    pub fn total(&self) -> u32 {
        self.counts.lock().expect("not poisoned").total
    }
}

impl Drop for WaitingPlace {
    fn drop(&mut self) {
        let mut counts = self.waits.counts.lock().expect("not poisoned");
        counts.total -= 1;
        if let Some(n) = counts.by_block.get_mut(&self.block) {
            *n -= 1;
            if *n == 0 {
                counts.by_block.remove(&self.block);
            }
        }
    }
}

/// The turns of each plugin block: one semaphore of
/// `limits.concurrent_calls` permits per block, shared by every file the
/// block's `files` match and kept across reloads.
#[derive(Debug, Default)]
pub struct BlockTurns {
    /// By block name and number of turns.
    by_block: Mutex<HashMap<(String, u32), Arc<Semaphore>>>,
}

impl BlockTurns {
    /// The semaphore of the block `block` with `permits` turns, made the
    /// first time. A reloaded configuration that changes the number gets
    /// another semaphore: calls running keep the turns they hold, new calls
    /// take turns among the new number (and a reload that is refused, or
    /// undone, finds the running one again).
    pub fn for_block(&self, block: &str, permits: u32) -> Arc<Semaphore> {
        self.by_block
            .lock()
            .expect("not poisoned")
            .entry((block.to_string(), permits))
            .or_insert_with(|| Arc::new(Semaphore::new(permits as usize)))
            .clone()
    }
}

/// A call's turn among the plugin's `limits.concurrent_calls`: the permit,
/// given back while the call waits for a human and taken again after.
pub struct Turn {
    semaphore: Arc<Semaphore>,
    permit: Option<OwnedSemaphorePermit>,
}

impl Turn {
    /// Waits for a turn.
    pub async fn take(semaphore: &Arc<Semaphore>) -> Turn {
        let permit = match semaphore.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                tracing::debug!("waiting for a turn (limits.concurrent_calls)");
                semaphore
                    .clone()
                    .acquire_owned()
                    .await
                    .expect("the semaphore is never closed")
            }
        };
        Turn {
            semaphore: semaphore.clone(),
            permit: Some(permit),
        }
    }

    /// Gives the permit back (while waiting for a human).
    pub fn release(&mut self) {
        self.permit = None;
    }

    /// Takes the permit again, waiting if others hold them all.
    pub async fn resume(&mut self) {
        if self.permit.is_none() {
            self.permit = Some(
                self.semaphore
                    .clone()
                    .acquire_owned()
                    .await
                    .expect("the semaphore is never closed"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_for_users_is_capped_per_block_and_host_wide() {
        let waits = Arc::new(WaitingForUser::default());
        let a = waits.enter("a", 1).unwrap();
        assert!(
            waits
                .enter("a", 1)
                .unwrap_err()
                .contains("limits.concurrent_calls")
        );
        let mut held = Vec::new();
        for _ in 1..MAX_WAITING_FOR_USER {
            held.push(waits.enter("b", u32::MAX).unwrap());
        }
        assert!(waits.enter("c", 1).unwrap_err().contains("already waiting"));
        drop(a);
        assert_eq!(waits.total(), MAX_WAITING_FOR_USER - 1);
        assert!(waits.enter("a", 1).is_ok());
    }

    #[test]
    fn a_loads_compiling_engine_is_made_once_dropped_at_its_end_and_compiles_for_the_serving_one() {
        let runtime = Runtime::new(64 << 20).unwrap();
        let first = runtime.compiler.engine().unwrap();
        let again = runtime.compiler.engine().unwrap();
        assert!(Engine::same(&first, &again), "one per load");
        assert!(
            !Engine::same(&first, &runtime.engine),
            "not the serving engine"
        );

        // What it compiles runs on the serving engine.
        let artifact = first
            .precompile_component(b"\0asm\x0d\x00\x01\x00")
            .unwrap();
        // SAFETY: just compiled, by the load's compiling engine.
        unsafe { wasmtime::component::Component::deserialize(&runtime.engine, &artifact) }.unwrap();

        let gone = first.weak();
        drop((first, again));
        assert!(gone.upgrade().is_some(), "kept while the load lasts");
        runtime.end_load();
        assert!(
            gone.upgrade().is_none(),
            "dropped when it ends, with the compiler state wasmtime keeps"
        );
        assert!(!Engine::same(
            &runtime.compiler.engine().unwrap(),
            &runtime.engine
        ));
    }
}
