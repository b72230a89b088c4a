// The package entry (`import ... from 'provenant'`): the library, the media
// decoders that turn files into fingerprints, and the worker pool.
export * from './lib/index.js';
