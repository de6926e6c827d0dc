/**
 * 16 hex digits that keep a file name apart from every other handler's: the spool's record names
 * (`<ms>-<pid>-<suffix>`) and the temp names of new bindings. They live in private directories
 * (0700, this user's), so they need to be distinct, not unguessable; Math.random (two draws, 64
 * bits) does that without loading node:crypto, which would cost every hook event start-up time.
 */
const hex8 = () =>
  Math.floor(Math.random() * 0x1_0000_0000)
    .toString(16)
    .padStart(8, "0")

export const uniqueSuffix = (): string => `${hex8()}${hex8()}`
