/** The documentation's Markdown read as GitHub renders it, for the tests of docs/. */

/** Markdown without fenced code blocks, where link-like text is code, not a link. */
export function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export function anchorsOf(markdown: string): Set<string> {
  return new Set(
    [...prose(markdown).matchAll(/^#{1,6} +(.+?) *$/gm)].map(([, heading]) =>
      (heading ?? '')
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}
