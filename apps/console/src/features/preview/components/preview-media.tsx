/**
 * A result as a page shows it: animated GIF and WebP play in <img> by themselves; an MP4 plays
 * as the muted, looping, inline video that replaces an animated GIF.
 */
export function PreviewMedia({ src, type, alt }: { src: string; type: string; alt: string }) {
  return type.startsWith('video/') ? (
    <video src={src} muted loop autoPlay playsInline aria-label={alt} data-testid="preview-video" />
  ) : (
    <img src={src} alt={alt} />
  );
}
