import { describe, expect, it } from 'vitest';
import {
  deliveryPath,
  infoParameters,
  parameterString,
  savingPercent,
  type PreviewControls,
} from './preview-params.ts';

const controls = (over: Partial<PreviewControls> = {}): PreviewControls => ({
  width: '',
  height: '',
  mode: '',
  format: '',
  quality: '',
  extra: '',
  ...over,
});

describe('preview parameters', () => {
  it('builds the common parameters in a fixed order and keeps the free text', () => {
    expect(
      parameterString(
        controls({
          width: '400',
          height: '300',
          mode: '2',
          format: 'webp',
          quality: '75',
          extra: 'blur=5x2, ,grayscale=100',
        }),
      ),
    ).toBe('w=400,h=300,a=2,f=webp,q=75,blur=5x2,grayscale=100');
    expect(parameterString(controls({ width: 'abc', height: '0' }))).toBe('');
  });

  it('swaps the format for the comparison, also over one typed in the free text', () => {
    expect(parameterString(controls({ width: '400', extra: 'f=png,q=50' }), 'avif')).toBe(
      'w=400,f=avif,q=50',
    );
  });

  it('puts the parameters before the image path', () => {
    expect(deliveryPath('w=400', 'fuji.jpg')).toBe('/w=400/fuji.jpg');
    expect(deliveryPath('', '/photos/cat.jpg')).toBe('/photos/cat.jpg');
  });

  it('asks f=json of the same variant, after the format it describes', () => {
    expect(infoParameters('w=400,f=webp')).toBe('w=400,f=webp,f=json');
    expect(infoParameters('')).toBe('f=json');
  });

  it('gives the saving in percent with one decimal', () => {
    expect(savingPercent(1000, 250)).toBe(75);
    expect(savingPercent(1000, 1500)).toBe(-50);
    expect(savingPercent(0, 10)).toBeNull();
  });
});
