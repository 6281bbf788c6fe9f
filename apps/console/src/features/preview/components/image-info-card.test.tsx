import { cleanup, render, screen, within } from '@testing-library/react';
import { encode } from 'blurhash';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setLanguage } from '@/lib/i18n.ts';
import { isImageInfo, type ImageInfo } from '@/features/preview/image-info.ts';
import { ImageInfoCard } from './image-info-card.tsx';
import { PreviewMedia } from './preview-media.tsx';

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

/** A hash made here from known pixels: left red, right blue. */
function hashOf(width: number, height: number): string {
  const pixels = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    const left = i % width < width / 2;
    pixels.set(left ? [220, 20, 20, 255] : [20, 20, 220, 255], i * 4);
  }
  return encode(pixels, width, height, 4, 3);
}

const info: ImageInfo = {
  width: 600,
  height: 400,
  format: 'webp',
  contentType: 'image/webp',
  bytes: 12345,
  hasAlpha: false,
  frames: 12,
  orientation: 1,
  dominantColor: '#d81818',
  blurhash: hashOf(32, 21),
  original: {
    width: 1200,
    height: 800,
    format: 'gif',
    contentType: 'image/gif',
    bytes: 292222,
    hasAlpha: true,
    frames: 12,
    orientation: 6,
  },
};

/** jsdom has no 2D canvas: a context that keeps what the card draws. */
function recordCanvas() {
  const drawn: ImageData[] = [];
  const context = {
    createImageData: (width: number, height: number) =>
      ({ width, height, data: new Uint8ClampedArray(width * height * 4) }) as ImageData,
    putImageData: (image: ImageData) => drawn.push(image),
  };
  vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation(
    () => context as unknown as CanvasRenderingContext2D,
  );
  return drawn;
}

describe('ImageInfoCard', () => {
  it('lists the variant and the original from the f=json answer', async () => {
    await setLanguage('ja');
    recordCanvas();
    render(<ImageInfoCard url="http://edge/w=600,f=webp,f=json/a.gif" info={{ state: 'loaded', info }} />);
    const result = screen.getByTestId('preview-info-result');
    expect(within(result).getByTestId('preview-info-result-size').textContent).toBe('600 × 400 px');
    expect(within(result).getByTestId('preview-info-result-format').textContent).toBe('WEBP');
    expect(within(result).getByTestId('preview-info-result-bytes').textContent).toBe('12,345 バイト');
    expect(within(result).getByTestId('preview-info-result-alpha').textContent).toBe('なし');
    expect(within(result).getByTestId('preview-info-result-frames').textContent).toBe('12');
    const original = screen.getByTestId('preview-info-original');
    expect(within(original).getByTestId('preview-info-original-bytes')).toHaveProperty(
      'dataset.value',
      '292222',
    );
    expect(within(original).getByTestId('preview-info-original-orientation').textContent).toBe('6');
    expect(within(original).getByTestId('preview-info-original-alpha').textContent).toBe('あり');
    expect(screen.getByText('画像情報 (f=json)')).toBeTruthy();
    expect(screen.getByTestId('preview-info-dominant').textContent).toBe('#d81818');
    expect(screen.getByTestId('preview-info-blurhash').textContent).toBe(info.blurhash);
    expect(screen.getByRole('link', { name: 'JSON を開く' }).getAttribute('href')).toBe(
      'http://edge/w=600,f=webp,f=json/a.gif',
    );
  });

  it('draws the placeholder the hash decodes to, in the shape of the variant', () => {
    const drawn = recordCanvas();
    render(<ImageInfoCard url="/f=json/a.gif" info={{ state: 'loaded', info }} />);
    const canvas = screen.getByTestId('preview-info-placeholder') as HTMLCanvasElement;
    expect([canvas.width, canvas.height]).toEqual([32, 21]);
    expect(drawn).toHaveLength(1);
    const { data, width } = drawn[0]!;
    const at = (x: number, y: number) =>
      Array.from(data.subarray((y * width + x) * 4, (y * width + x) * 4 + 3));
    const [leftRed, , leftBlue] = at(2, 10);
    const [rightRed, , rightBlue] = at(29, 10);
    expect(leftRed).toBeGreaterThan(leftBlue! + 100);
    expect(rightBlue).toBeGreaterThan(rightRed! + 100);
  });

  it("says why when the edge refused, in the reader's language", async () => {
    await setLanguage('en');
    render(
      <ImageInfoCard
        url="/f=json/a.gif"
        info={{ state: 'failed', status: 403, code: 'invalid-signature' }}
      />,
    );
    const error = screen.getByTestId('preview-info-error');
    expect(error.textContent).toContain('The image info could not be fetched.');
    expect(error.textContent).toContain("The URL's signature is missing or wrong.");
    await setLanguage('ja');
  });
});

describe('isImageInfo', () => {
  it('accepts the documented shape only', () => {
    expect(isImageInfo(info)).toBe(true);
    expect(isImageInfo({ ...info, original: undefined })).toBe(false);
    expect(isImageInfo({ ...info, dominantColor: 'red' })).toBe(false);
    expect(isImageInfo({ ...info, blurhash: 'not a hash' })).toBe(false);
    expect(isImageInfo({ ...info, bytes: '12345' })).toBe(false);
    expect(isImageInfo(null)).toBe(false);
  });
});

describe('PreviewMedia', () => {
  it('plays an MP4 result as a muted looping inline video, and shows images in <img>', () => {
    const { container } = render(<PreviewMedia src="blob:x" type="video/mp4" alt="result" />);
    const video = screen.getByTestId('preview-video') as HTMLVideoElement;
    expect([video.muted, video.loop, video.autoplay, video.hasAttribute('playsinline')]).toEqual([
      true,
      true,
      true,
      true,
    ]);
    cleanup();
    render(<PreviewMedia src="blob:y" type="image/gif" alt="result" />);
    expect(screen.getByRole('img', { name: 'result' }).tagName).toBe('IMG');
    expect(container.querySelector('video')).toBeNull();
  });
});
