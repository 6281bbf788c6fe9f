/**
 * The help centre's questions and answers, in both languages. Kept beside the page (not in the
 * translation catalogues) so they load with the help page only, not with every screen.
 */
export interface FaqItem {
  id: string;
  topic: FaqTopic;
  question: { ja: string; en: string };
  answer: { ja: string; en: string };
  /** A page of the documentation that explains more, below /docs/. */
  docs?: string;
}

export const FAQ_TOPICS = [
  'login',
  'twoStep',
  'tokens',
  'origins',
  'signedUrl',
  'cache',
  'statistics',
  'plans',
  'live',
] as const;
export type FaqTopic = (typeof FAQ_TOPICS)[number];

export const FAQ: FaqItem[] = [
  {
    id: 'login-failed',
    topic: 'login',
    question: {
      ja: 'ログインできません。',
      en: 'I cannot log in.',
    },
    answer: {
      ja: 'メールアドレスとパスワードをご確認ください。同じメールアドレスで15分間に5回失敗すると、そのアドレスでのログインは15分間停止されます。パスワードを忘れた場合はログイン画面の「パスワードをお忘れの方」から再設定用のリンクを受け取れます（60分間・1回のみ有効）。',
      en: 'Check the e-mail address and the password. After 5 failures for the same address within 15 minutes, logging in with that address is paused for 15 minutes. If you forgot the password, ask for a reset link with "Forgot your password?" on the login screen; the link is valid for 60 minutes and works once.',
    },
  },
  {
    id: 'login-activation',
    topic: 'login',
    question: {
      ja: 'ログインするとパスワード設定画面が表示されます。',
      en: 'After logging in I am sent to a page to set my password.',
    },
    answer: {
      ja: '新しく作成されたアカウントは有効化が必要です。招待メールのリンク（7日間有効）を開くか、表示された画面で新しいパスワードを設定すると有効化され、すべての画面を利用できるようになります。',
      en: 'A newly created account must be activated first. Open the link of the invitation mail (valid for 7 days), or set a new password on the page shown: that activates the account and every screen opens.',
    },
  },
  {
    id: 'login-organization',
    topic: 'login',
    question: {
      ja: '別の組織（サービス）の画面を見るには？',
      en: 'How do I switch to another organization (service)?',
    },
    answer: {
      ja: '右上のユーザーメニューから「組織の切り替え」を選びます。表示されるのは、あなたのアカウントが利用できる組織だけです。',
      en: 'Choose "Switch organization" in the user menu at the top right. Only the organizations your account may reach are listed.',
    },
  },
  {
    id: 'two-step-setup',
    topic: 'twoStep',
    question: {
      ja: '2段階認証を有効にするには？',
      en: 'How do I turn on two-step login?',
    },
    answer: {
      ja: '「アカウント設定」の2段階認証で、認証アプリ（Google Authenticator などの TOTP アプリ）に QR コードを読み込ませ、表示された6桁のコードを入力します。同時に表示される10個のバックアップコードは、端末をなくしたときに1個につき1回だけ使えます。安全な場所に保管してください。',
      en: 'In "Account settings", two-step login: scan the QR code with an authenticator app (any TOTP app such as Google Authenticator) and enter the 6-digit code it shows. Keep the 10 backup codes shown at the same time somewhere safe: each one works once, for when the phone is lost.',
    },
  },
  {
    id: 'two-step-lost',
    topic: 'twoStep',
    question: {
      ja: '認証アプリの端末をなくしました。',
      en: 'I lost the phone with my authenticator app.',
    },
    answer: {
      ja: 'ログイン時の確認コードの代わりにバックアップコードを入力してください。ログイン後、アカウント設定で2段階認証を設定し直せます。バックアップコードもない場合は、組織のメンバー管理権限を持つ方か、下のフォームからお問い合わせください。',
      en: 'Enter one of your backup codes instead of the verification code when logging in, then set up two-step login again in Account settings. Without a backup code, ask a member of your organization who manages members, or write to us with the form below.',
    },
  },
  {
    id: 'tokens-issue',
    topic: 'tokens',
    question: {
      ja: 'APIトークンはどこで発行しますか？',
      en: 'Where do I issue an API token?',
    },
    answer: {
      ja: 'ユーザーメニューの「APIトークン」で発行します。トークンの値は発行直後に一度だけ表示されます。API では「エンコード済みトークン」を Authorization: Bearer ヘッダーに入れて使います。トークンに付けられる権限は、発行する人が持っている権限までです。不要になったトークンは無効化または削除してください。',
      en: 'Under "API tokens" in the user menu. The secret is shown once, right after issuing. APIs take the "encoded token" in the Authorization: Bearer header. A token can hold only permissions its issuer holds. Disable or delete tokens you no longer need.',
    },
    docs: 'general/permissions',
  },
  {
    id: 'origins-what',
    topic: 'origins',
    question: {
      ja: 'オリジンとは何ですか？',
      en: 'What is an origin?',
    },
    answer: {
      ja: '変換前の画像が置かれている場所です。HTTP(S) のウェブサーバーか、S3 互換ストレージを指定できます。オリジンを作成すると配信用のホスト名が割り当てられ、そのホスト名への URL にパラメータを付けると変換された画像が返ります。設定の変更は反映中（Updating）を経て適用済み（Applied）になります。',
      en: 'The place where your original images are: an HTTP(S) web server or S3-compatible storage. Creating an origin assigns it a delivery hostname; URLs on that hostname with parameters return converted images. A change goes through Updating to Applied.',
    },
    docs: 'image/origin-settings',
  },
  {
    id: 'signed-url',
    topic: 'signedUrl',
    question: {
      ja: '署名付きURLが403になります。',
      en: 'My signed URL answers 403.',
    },
    answer: {
      ja: '署名は、sig パラメータを除いたリクエストパスそのもの（c/ などの接頭辞やパラメータの順序を含む）に対して計算します。パスを1文字でも変えると一致しません。署名用シークレットを変更すると、それまでの署名付きURLはすべて無効になります。expires を付けた URL は期限を過ぎると403になります。',
      en: 'The signature covers the request path exactly as sent, without the sig parameter (a c/ prefix and the order of the parameters included): any change to the path breaks it. Changing the signing secret invalidates every signed URL made before. URLs with expires answer 403 after that instant.',
    },
    docs: 'image/signed-url',
  },
  {
    id: 'cache-delete',
    topic: 'cache',
    question: {
      ja: '元画像を差し替えたのに古い画像が表示されます。',
      en: 'I replaced an image at the origin but the old one is still served.',
    },
    answer: {
      ja: '変換済みの画像はキャッシュされています。キャッシュ画面で画像の URL を指定して削除するか、API の /api/cache.delete を使ってください（キャッシュ権限が必要です）。同じ画像のすべての変換結果がまとめて削除されます。',
      en: 'Converted images are cached. Delete them on the Cache screen by the image URL, or with /api/cache.delete (the cache permission is needed). Every converted variant of that image is removed at once.',
    },
    docs: 'general/api-reference',
  },
  {
    id: 'statistics-month',
    topic: 'statistics',
    question: {
      ja: '統計の月の区切りが日本時間と合いません。',
      en: 'The months of the statistics do not match Japan time.',
    },
    answer: {
      ja: 'リクエスト数と転送量は UTC の暦月ごとに集計しています。日本時間（UTC+9）では、毎月1日の9:00から翌月1日の9:00までが1か月分です。',
      en: 'Requests and outbound traffic are counted per calendar month in UTC. In Japan time (UTC+9) a month runs from 9:00 on the 1st to 9:00 on the 1st of the next month.',
    },
  },
  {
    id: 'plans-change',
    topic: 'plans',
    question: {
      ja: 'プランを変更するには？',
      en: 'How do I change the plan?',
    },
    answer: {
      ja: 'サービス情報の画面からプラン変更に進みます（組織設定の権限が必要です）。上位プランへの変更はすぐに、下位プランへの変更は翌月から適用されることがあります。オリジン数やユーザー数が変更先の上限を超えている場合は変更できません。エンタープライズプランへの変更、またはエンタープライズプランからの変更は営業窓口までお問い合わせください。',
      en: 'From the Service information screen, go to Change plan (the organization settings permission is needed). Upgrades apply at once; a downgrade may take effect next month. A plan whose origin or user limit is below what you use cannot be chosen. To change to or from the Enterprise plan, please contact sales.',
    },
  },
  {
    id: 'live-start',
    topic: 'live',
    question: {
      ja: 'ライブ配信を始めるには？',
      en: 'How do I start live streaming?',
    },
    answer: {
      ja: 'ライブ配信の組織で、ライブ権限を持つ API トークンを発行し、ライブ配信 API でチャンネルを作成します。WHIP 対応のクライアント（OBS Studio 30 以降など）で配信すると、数秒後に HLS のプレイリスト URL が取得できます。',
      en: 'In a live streaming organization, issue an API token with the live permission and create a channel with the live API. Publish with a WHIP client (OBS Studio 30 or later, for example); a few seconds later the HLS playlist URL is available.',
    },
    docs: 'live/quickstart',
  },
];
