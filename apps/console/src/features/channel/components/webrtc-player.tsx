import { useEffect, useRef, useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import { useTranslation } from 'react-i18next';
import { WhipError } from '@/features/channel/whip-publisher.ts';
import { WhepViewer } from '@/features/channel/whep-viewer.ts';
import { LivePanel, PlayerVideo } from './live-panel.tsx';

/** The live host's WHEP endpoint of the channel: beside its WHIP endpoint. */
export function whepUrlOf(whipUrl: string, channelId: string): string {
  return new URL(`/whep/${channelId}`, whipUrl).toString();
}

/**
 * Plays the channel over WebRTC (WHEP) while it is on air, with the delay this browser adds
 * (jitter buffer and half the round trip), sampled every second.
 */
export function WebRtcPlayer({ url, onAir }: { url: string; onAir: boolean }) {
  const { t } = useTranslation();
  const video = useRef<HTMLVideoElement>(null);
  /**
   * A refusal (status, reason), a failure to connect, or the connection ended by the server or
   * the network; translated when shown.
   */
  const [problem, setProblem] = useState<WhipError | 'failed' | 'lost' | null>(null);
  const [delay, setDelay] = useState<number | undefined>();
  useEffect(() => {
    const element = video.current;
    if (!onAir || !element) return;
    const viewer = new WhepViewer(url);
    let sampler: ReturnType<typeof setInterval> | undefined;
    setProblem(null);
    viewer
      .start(() => {
        clearInterval(sampler);
        setDelay(undefined);
        setProblem('lost');
      })
      .then((stream) => {
        element.srcObject = stream;
        void element.play().catch(() => undefined);
        sampler = setInterval(() => void viewer.receiverDelay().then(setDelay), 1000);
      })
      .catch((error: unknown) => setProblem(error instanceof WhipError ? error : 'failed'));
    return () => {
      clearInterval(sampler);
      setDelay(undefined);
      // A viewer ended with the publisher's session is no problem of the next one.
      setProblem(null);
      element.srcObject = null;
      void viewer.stop();
    };
  }, [url, onAir]);
  return (
    <LivePanel title={t('channel.webrtcTitle')}>
      <PlayerVideo ref={video} testId="channel-webrtc-player" hidden={!onAir} />
      {onAir ? (
        delay !== undefined && (
          <div className="small mt-2" data-testid="channel-webrtc-delay" data-delay={delay.toFixed(3)}>
            {t('channel.webrtcDelay', { ms: Math.round(delay * 1000) })}
          </div>
        )
      ) : (
        <Alert variant="secondary" className="small" data-testid="channel-webrtc-waiting">
          {t('channel.webrtcWaiting')}
        </Alert>
      )}
      {problem && (
        <Alert variant="warning" className="small mt-2" data-testid="channel-webrtc-error">
          {problem === 'failed'
            ? t('channel.webrtcFailed')
            : problem === 'lost'
              ? t('channel.webrtcLost')
              : problem.status === 503
                ? t('channel.webrtcNoRoom')
                : t('channel.webrtcRefused', { status: problem.status, reason: problem.reason })}
        </Alert>
      )}
    </LivePanel>
  );
}
