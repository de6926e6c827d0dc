/** This build's version; a unit test keeps it equal to package.json. */
export const VERSION = "0.1.0"
