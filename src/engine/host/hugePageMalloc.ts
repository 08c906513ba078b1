/**
 * Transparent huge pages for the inference worker's weights (Linux, glibc >= 2.35).
 *
 * onnxruntime keeps a model's prepacked 4-bit weights in large malloc blocks, and every decode step reads all
 * of them: with 4 KB pages a 0.5B model's 330 MB is 80,000 pages a token, more than the TLB holds. glibc's
 * `glibc.malloc.hugetlb=1` tunable makes malloc ask for 2 MB pages on such blocks (madvise), which the kernel
 * grants when transparent huge pages are in `madvise` or `always` mode. Measured on the 0.5B and 1.5B shapes
 * (`npm run bench:huge-pages`): 1.5-3% faster decode, 7-10 MB more memory. Older glibc, musl and other systems ignore
 * the variable; a user's own `glibc.malloc.hugetlb` setting is kept (set it to 0 to opt out).
 */
export const HUGE_PAGE_TUNABLE = 'glibc.malloc.hugetlb';

/** The environment for a worker process: `env` with the huge-page tunable added on Linux. */
export function withHugePageMalloc(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): NodeJS.ProcessEnv {
  if (platform !== 'linux') return env;
  const current = env.GLIBC_TUNABLES ?? '';
  const tunables = current.split(':').filter((t) => t !== '');
  if (tunables.some((t) => t.split('=')[0] === HUGE_PAGE_TUNABLE)) return env;
  return { ...env, GLIBC_TUNABLES: [...tunables, `${HUGE_PAGE_TUNABLE}=1`].join(':') };
}
