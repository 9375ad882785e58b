// The type of /vendor/purify.js, which tools/build-web-assets.mjs copies from the dompurify package's ES module build.
export { default } from 'dompurify';
