// fsbench record's native eBPF capture (docs/replay.md, "How it records"): built by build.rs
// with `clang -target bpf`, loaded by src/workload/replay/native.rs. One program serves every
// syscall entry tracepoint and one every exit, so the kernel runs no per-call formatting: a
// call of a recorded thread costs one hash lookup at entry and one at exit (a short call, one
// at its exit: on_exit_only), and its record
// goes to a ring buffer that fsbench drains on a timer (no wake-up per event, which with
// bpftrace was most of what a capture cost).
//
// Self-contained on purpose (no libbpf headers): only clang is needed to build it. The
// tracepoint layouts below are the kernel's stable ones for syscall events (tracefs'
// `format` files); the fork event's child pid moved between kernels, so its offset is read
// from tracefs by the loader and passed in `params`.

typedef unsigned char u8;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;

#define SEC(n) __attribute__((section(n), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name

#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_RINGBUF 27
#define BPF_ANY 0
#define BPF_RB_NO_WAKEUP 1

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value, u64 flags) = (void *)2;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)3;
static u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static long (*bpf_probe_read_user)(void *dst, u32 size, const void *src) = (void *)112;
static long (*bpf_probe_read_kernel)(void *dst, u32 size, const void *src) = (void *)113;
static long (*bpf_probe_read_user_str)(void *dst, u32 size, const void *src) = (void *)114;
static void *(*bpf_ringbuf_reserve)(void *ringbuf, u64 size, u64 flags) = (void *)131;
static void (*bpf_ringbuf_submit)(void *data, u64 flags) = (void *)132;
static void *(*bpf_get_current_task_btf)(void) = (void *)158;
static void *(*bpf_task_pt_regs)(void *task) = (void *)175;

// Longest path read (with its NUL); native.rs's PATH_MAX_READ.
#define PATH_LEN 256

// A recorded thread and its call in flight: `ts` 0 when none.
struct thread {
    u64 ts;
    u64 args[6];
    s32 nr;
    u32 pad;
};

// How to read a syscall's arguments, by syscall number: the indices (plus one; 0 = none) of
// up to two path arguments and of one argument that points to a u64 to read instead of the
// pointer (openat2's `struct open_how`, whose first field is `flags`).
struct conf {
    u8 str0;
    u8 str1;
    u8 deref;
    u8 pad;
};

// A record: a call (kind 0), a fork (1: args[0] the new thread) or an exec (2).
struct event {
    u32 kind;
    s32 nr;
    u32 tid;
    u32 pid;
    u64 ts;
    u64 end;
    s64 ret;
    u64 args[6];
};

struct event_paths {
    struct event e;
    char s[2][PATH_LEN];
};

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 65536);
    __type(key, u32);
    __type(value, struct thread);
} threads SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1024);
    __type(key, u32);
    __type(value, struct conf);
} confs SEC(".maps");

// [0]: the offset of `child_pid` in sched_process_fork's record.
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, u32);
    __type(value, u32);
} params SEC(".maps");

// Records the ring had no room for, per CPU.
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, u32);
    __type(value, u64);
} lost SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 1 << 26);
} events SEC(".maps");

struct enter_ctx {
    u64 common;
    s32 nr;
    u32 pad;
    u64 args[6];
};

struct exit_ctx {
    u64 common;
    s32 nr;
    u32 pad;
    s64 ret;
};

// Argument k (0-5) of the call in flight; a switch, not an index, so that the verifier sees
// every access in bounds (clang moves an index's range check away from its use).
static u64 arg_at(struct thread *t, u32 k)
{
    switch (k) {
    case 0: return t->args[0];
    case 1: return t->args[1];
    case 2: return t->args[2];
    case 3: return t->args[3];
    case 4: return t->args[4];
    default: return t->args[5];
    }
}

static void set_arg(struct thread *t, u32 k, u64 v)
{
    switch (k) {
    case 0: t->args[0] = v; break;
    case 1: t->args[1] = v; break;
    case 2: t->args[2] = v; break;
    case 3: t->args[3] = v; break;
    case 4: t->args[4] = v; break;
    default: t->args[5] = v; break;
    }
}

static void count_lost(void)
{
    u32 zero = 0;
    u64 *n = bpf_map_lookup_elem(&lost, &zero);
    if (n)
        *n += 1;
}

SEC("tracepoint/syscalls/sys_enter")
int on_enter(struct enter_ctx *ctx)
{
    u32 tid = (u32)bpf_get_current_pid_tgid();
    struct thread *t = bpf_map_lookup_elem(&threads, &tid);
    if (!t)
        return 0;
    t->nr = ctx->nr;
    // Copied, not read field by field: a syscall with fewer than six arguments has a shorter
    // record, and the kernel refuses to attach a program that reads past a record's end.
    bpf_probe_read_kernel(t->args, sizeof(t->args), ctx->args);
    t->ts = bpf_ktime_get_ns();
    return 0;
}

static void fill(struct event *e, struct thread *t, u64 id, s32 nr, s64 ret, u64 ts)
{
    e->kind = 0;
    e->nr = nr;
    e->tid = (u32)id;
    e->pid = id >> 32;
    e->ts = ts;
    e->end = bpf_ktime_get_ns();
    e->ret = ret;
    e->args[0] = t->args[0];
    e->args[1] = t->args[1];
    e->args[2] = t->args[2];
    e->args[3] = t->args[3];
    e->args[4] = t->args[4];
    e->args[5] = t->args[5];
}

// The call in flight of thread `t` returned `ret`: its record to the ring.
static __attribute__((always_inline)) int emit(struct thread *t, u64 id, s32 nr, s64 ret)
{
    u64 ts = t->ts;
    t->ts = 0;
    u32 key = (u32)nr;
    struct conf *c = bpf_map_lookup_elem(&confs, &key);
    if (c && c->deref) {
        u64 v = 0;
        bpf_probe_read_user(&v, sizeof(v), (void *)arg_at(t, c->deref - 1));
        set_arg(t, c->deref - 1, v);
    }
    if (c && c->str0) {
        struct event_paths *p = bpf_ringbuf_reserve(&events, sizeof(*p), 0);
        if (!p) {
            count_lost();
            return 0;
        }
        fill(&p->e, t, id, nr, ret, ts);
        p->s[0][0] = 0;
        p->s[1][0] = 0;
        bpf_probe_read_user_str(p->s[0], PATH_LEN, (void *)arg_at(t, c->str0 - 1));
        if (c->str1)
            bpf_probe_read_user_str(p->s[1], PATH_LEN, (void *)arg_at(t, c->str1 - 1));
        bpf_ringbuf_submit(p, BPF_RB_NO_WAKEUP);
        return 0;
    }
    struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
    if (!e) {
        count_lost();
        return 0;
    }
    fill(e, t, id, nr, ret, ts);
    bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
    return 0;
}

SEC("tracepoint/syscalls/sys_exit")
int on_exit(struct exit_ctx *ctx)
{
    u64 id = bpf_get_current_pid_tgid();
    u32 tid = (u32)id;
    struct thread *t = bpf_map_lookup_elem(&threads, &tid);
    if (!t || !t->ts || t->nr != ctx->nr)
        return 0;
    return emit(t, id, ctx->nr, ctx->ret);
}

// x86-64's saved user registers (struct pt_regs, 21 slots of 8 bytes): a syscall's six
// arguments stay there until it returns, in rdi (slot 14), rsi (13), rdx (12), r10 (7), r8 (9)
// and r9 (8).
#define REGS 21

// A call recorded from its exit alone (the loader attaches no entry program to it): its
// arguments from the registers the task entered the kernel with, its time its end. For calls
// whose duration the trace does not need (lseek, close, the stat family…), most of what
// PostgreSQL makes: one program run and one lookup a call instead of two.
SEC("tracepoint/syscalls/sys_exit_only")
int on_exit_only(struct exit_ctx *ctx)
{
    u64 id = bpf_get_current_pid_tgid();
    u32 tid = (u32)id;
    struct thread *t = bpf_map_lookup_elem(&threads, &tid);
    if (!t)
        return 0;
    u64 regs[REGS] = {};
    bpf_probe_read_kernel(regs, sizeof(regs), bpf_task_pt_regs(bpf_get_current_task_btf()));
    t->args[0] = regs[14];
    t->args[1] = regs[13];
    t->args[2] = regs[12];
    t->args[3] = regs[7];
    t->args[4] = regs[9];
    t->args[5] = regs[8];
    t->nr = ctx->nr;
    t->ts = bpf_ktime_get_ns();
    return emit(t, id, ctx->nr, ctx->ret);
}

static void note(u32 kind, u64 id, u64 child)
{
    struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
    if (!e) {
        count_lost();
        return;
    }
    __builtin_memset(e, 0, sizeof(*e));
    e->kind = kind;
    e->tid = (u32)id;
    e->pid = id >> 32;
    e->ts = bpf_ktime_get_ns();
    e->args[0] = child;
    bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

SEC("tracepoint/sched/sched_process_fork")
int on_fork(void *ctx)
{
    u64 id = bpf_get_current_pid_tgid();
    u32 tid = (u32)id;
    if (!bpf_map_lookup_elem(&threads, &tid))
        return 0;
    u32 zero = 0;
    u32 *off = bpf_map_lookup_elem(&params, &zero);
    if (!off)
        return 0;
    s32 child = 0;
    bpf_probe_read_kernel(&child, sizeof(child), (char *)ctx + (*off & 0xff));
    struct thread fresh = {};
    u32 key = (u32)child;
    bpf_map_update_elem(&threads, &key, &fresh, BPF_ANY);
    note(1, id, key);
    return 0;
}

SEC("tracepoint/sched/sched_process_exec")
int on_exec(void *ctx)
{
    u64 id = bpf_get_current_pid_tgid();
    u32 tid = (u32)id;
    if (bpf_map_lookup_elem(&threads, &tid))
        note(2, id, 0);
    return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int on_thread_exit(void *ctx)
{
    u32 tid = (u32)bpf_get_current_pid_tgid();
    bpf_map_delete_elem(&threads, &tid);
    return 0;
}

char LICENSE[] SEC("license") = "GPL";
