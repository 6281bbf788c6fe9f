/**
 * Message keys shared by server and console, with their Japanese (default) and English text.
 * A message reference on the wire is the key, optionally followed by `|` and URL-encoded
 * parameters: `validation.maxLength|n=128`. The console interpolates `{{n}}`.
 */
export interface MessageText {
  ja: string;
  en: string;
}

export const MESSAGES = {
  // Validation (console-spec section 5)
  'validation.required': { ja: '必須項目です', en: 'required' },
  'validation.maxLength': {
    ja: '{{n}}文字以下で入力してください',
    en: 'input equals or less than {{n}} letters',
  },
  'validation.minLength': {
    ja: '{{n}}文字以上で入力してください',
    en: 'input equals or more than {{n}} letters',
  },
  'validation.maxLines': { ja: '{{n}}行以下で入力してください', en: 'input equals or less than {{n}} lines' },
  'validation.numeric': { ja: '数値を入力してください', en: 'input numeric value' },
  'validation.between': {
    ja: '{{min}}以上{{max}}以下の値を入力してください',
    en: 'input a value between {{min}} and {{max}}',
  },
  'validation.pattern': {
    ja: '正規表現 {{pattern}} を満たすように入力してください',
    en: 'input as satisfy regular expression: {{pattern}}',
  },
  'validation.email': { ja: '正しいメールアドレスを入力してください', en: 'input correct e-mail address' },
  'validation.host': { ja: '正しいホスト名を入力してください', en: 'import correct host name' },
  'validation.invalid': { ja: '不正な値です', en: 'invalid value' },
  'validation.duplicate': { ja: '値が重複しています', en: 'duplicate value' },
  'validation.notMatch': { ja: '一致しません', en: 'Not match' },
  'validation.password': {
    ja: 'パスワードは英数字と記号で入力してください',
    en: 'use letters, digits and symbols only',
  },
  'validation.printableAscii': {
    ja: '半角英数字と記号で入力してください',
    en: 'use printable ASCII characters only',
  },
  'validation.cidr': {
    ja: 'IPアドレスまたはCIDRを1行に1つ入力してください',
    en: 'enter one IP address or CIDR per line',
  },
  'validation.privateAddress': {
    ja: 'プライベート、ループバック、リンクローカルのアドレスには接続できません',
    en: 'private, loopback and link-local addresses cannot be reached',
  },
  'validation.permissionNotHeld': {
    ja: '自分が持っていない権限は付与できません',
    en: 'you can grant only permissions you hold',
  },
  'validation.agreement': {
    ja: '個人情報の取り扱いへの同意が必要です',
    en: 'agreement to the handling of personal information is required',
  },

  // Error catalogue (console-spec section 8)
  'error.internal': { ja: '内部エラーが発生しました', en: 'an internal error occurred' },
  'error.unexpected': { ja: '予期しないエラーが発生しました', en: 'an unexpected error occurred' },
  'error.invalidInputs': { ja: '入力内容に誤りがあります', en: 'there are one or more invalid inputs' },
  'error.sessionInvalid': {
    ja: 'セッションが無効です。再度ログインしてください',
    en: 'session is invalid. please login again',
  },
  'error.notActivated': {
    ja: 'アカウントが有効化されていません。パスワードを設定してください',
    en: 'your account is not activated yet. please set your password',
  },
  'error.noOrganization': { ja: '組織を選択してください', en: 'please choose an organization' },
  'error.notFound': { ja: '見つかりません', en: 'not found' },
  'error.badRequest': { ja: '不正なリクエストです', en: 'the request is invalid' },
  'error.tooManyOrigins': {
    ja: 'オリジン数が現在のプランの上限に達しました',
    en: 'The number of origins reached the limit for your current plan',
  },
  'error.tooManyUsers': {
    ja: 'ユーザー数が現在のプランの上限に達しました',
    en: 'The number of users reached the limit for your current plan',
  },
  // Only the activation page shows these three: they speak of the link its reader opened.
  'error.activationNotFound': {
    ja: 'この有効化リンクは無効です。メールのリンクを最後まで開いたかご確認ください。',
    en: 'This activation link is not valid. Please check that you opened the whole link from the mail.',
  },
  'error.alreadyActivated': {
    ja: 'このアカウントはすでに有効化されています。',
    en: 'This account has already been activated.',
  },
  'error.activationExpired': {
    ja: 'この有効化リンクは有効期限が切れています。',
    en: 'This activation link has expired.',
  },
  'error.emailNotMatch': {
    ja: 'メールアドレスがアカウントのものと一致しません',
    en: 'The e-mail address does not match that of account',
  },
  'error.notValidUser': { ja: '指定されたユーザーは無効です', en: 'The specified user is invalid' },
  'error.wrongCredentials': {
    ja: 'メールアドレスまたはパスワードが正しくありません',
    en: 'wrong e-mail address or password',
  },
  'error.passwordTooLong': {
    ja: 'パスワードは128文字以下です。思い出せない場合はパスワード再設定ページをご利用ください',
    en: 'the password is longer than 128 letters. use the password reset page if you cannot remember it',
  },
  'error.tooManyAttempts': {
    ja: '試行回数が多すぎます。しばらくしてから再度お試しください',
    en: 'too many attempts. please wait a while and try again',
  },
  'error.wrongOldPassword': { ja: '現在のパスワードが正しくありません', en: 'the old password is wrong' },
  'error.passwordIncorrect': { ja: 'パスワードが正しくありません', en: 'password is incorrect' },
  'error.domainInUse': {
    ja: 'このドメイン名はすでに使用されています',
    en: 'This domain name is already in use',
  },
  'error.customDomainRequired': {
    ja: '独自ドメインを指定してください',
    en: 'Please specify a custom domain',
  },
  'error.originNotFound': {
    ja: 'オリジン(ID: {{id}})が見つかりませんでした',
    en: 'Origin could not be found (ID: {{id}})',
  },
  'error.cacheUnavailable': {
    ja: 'このサーバーからはキャッシュを操作できません',
    en: 'the image cache cannot be reached from this server',
  },
  'error.invalidCertificateOrigin': {
    ja: 'SSL証明書をアップロードできないオリジンです',
    en: 'Invalid origin to upload SSL certificate for',
  },
  'error.certificateHostMismatch': {
    ja: 'SSL証明書のホスト名が独自ドメイン({{host}})と一致しません',
    en: 'the SSL certificate is not valid for the custom domain ({{host}})',
  },
  'error.certificateExpired': {
    ja: 'SSL証明書の有効期限が切れているか、まだ有効期間が始まっていません',
    en: 'the SSL certificate has expired or is not valid yet',
  },
  'error.certificateChainInvalid': {
    ja: 'SSL証明書が中間証明書で検証できません',
    en: 'the SSL certificate chain is invalid: the intermediate certificate did not issue it',
  },
  'error.certificateKeyMismatch': {
    ja: '秘密鍵がSSL証明書と一致しません',
    en: 'the secret key does not match the SSL certificate',
  },
  'error.certificateKeyEncrypted': {
    ja: '暗号化された秘密鍵は使用できません。パスフレーズを外してからアップロードしてください',
    en: 'encrypted secret keys are not accepted; remove the passphrase before uploading',
  },
  'error.certificateUnreadable': {
    ja: 'SSL証明書または秘密鍵をPEM形式として読み取れません',
    en: 'the SSL certificate or secret key cannot be read as PEM',
  },
  'error.lastFullPermissionUser': {
    ja: 'すべての権限を持つユーザーが少なくとも1人必要です',
    en: 'At least one user must have all permissions',
  },
  'error.tokenIssueFailed': { ja: 'トークンを発行できませんでした', en: "couldn't issue token." },
  'error.tokenDeleteFailed': { ja: 'APIトークンを削除できませんでした', en: 'failed to delete API token' },
  'error.userDeleteFailed': { ja: 'ユーザーを削除できませんでした', en: 'failed to delete the user' },
  'error.planUserCount': {
    ja: 'ユーザー数が変更先プランの上限を超えています',
    en: 'the number of users exceeds the limit of the new plan',
  },
  'error.planCustomDomain': {
    ja: '独自ドメインを使用中のため変更できません',
    en: 'a custom domain is in use, which the new plan does not allow',
  },
  'error.planOriginCount': {
    ja: 'オリジン数が変更先プランの上限を超えています',
    en: 'the number of origins exceeds the limit of the new plan',
  },
  'error.planNonHttpOrigin': {
    ja: 'HTTP以外のオリジンを使用中のため変更できません',
    en: 'a non-HTTP origin is in use, which the new plan does not allow',
  },
  'error.planInvalid': { ja: 'プラン変更のリクエストが不正です', en: 'the plan change request is invalid' },
  'error.planContactSales': {
    ja: 'エンタープライズプランへの変更、またはエンタープライズプランからの変更は営業窓口までお問い合わせください',
    en: 'please contact sales to change to or from the enterprise plan',
  },
  'error.totpInvalid': { ja: '確認コードが正しくありません', en: 'the verification code is wrong' },
  'error.notImplemented': {
    ja: 'この機能はまだ提供されていません',
    en: 'this function is not available yet',
  },
  // The Platform API (/api/v1)
  'error.apiTokenInvalid': {
    ja: 'APIトークンがないか、無効です',
    en: 'the API token is missing or invalid',
  },
  'error.tooManyRequests': {
    ja: 'リクエストが多すぎます。Retry-After の秒数だけ待ってから再試行してください',
    en: 'too many requests; retry after the seconds in Retry-After',
  },
  'error.preconditionFailed': {
    ja: '読み込んだ後に変更されています。読み直してから更新してください',
    en: 'it was changed since you read it; read it again before updating',
  },
  'error.idempotencyKeyReused': {
    ja: 'この Idempotency-Key は別のリクエストに使われています',
    en: 'this Idempotency-Key was used for another request',
  },
  'error.idempotencyKeyInUse': {
    ja: 'この Idempotency-Key のリクエストはまだ処理中です',
    en: 'a request with this Idempotency-Key is still being processed',
  },
  // The ukiyo CLI (packages/sdk)
  'cli.usage': {
    ja: '使い方: ukiyo login --token {エンコード済みトークン} [--url {コンソールのURL}] | ukiyo origins list | ukiyo origins create -f {JSON/YAMLファイル} | ukiyo origins update {オリジンID} -f {ファイル} | ukiyo origins copy {オリジンID} | ukiyo origins rotate-secret {オリジンID} | ukiyo purge {画像URL} | ukiyo usage',
    en: 'usage: ukiyo login --token {encoded token} [--url {console URL}] | ukiyo origins list | ukiyo origins create -f {JSON/YAML file} | ukiyo origins update {origin ID} -f {file} | ukiyo origins copy {origin ID} | ukiyo origins rotate-secret {origin ID} | ukiyo purge {image URL} | ukiyo usage',
  },
  'cli.loggedIn': {
    ja: '{{organization}} のトークンを {{file}} に保存しました',
    en: 'saved the token of {{organization}} in {{file}}',
  },
  'cli.notLoggedIn': {
    ja: 'ログインしていません。ukiyo login --token {トークン} を実行してください',
    en: 'not logged in: run ukiyo login --token {token}',
  },
  'cli.fileUnreadable': {
    ja: '{{file}} を JSON または YAML として読み込めません',
    en: 'cannot read {{file}} as JSON or YAML',
  },
  'cli.unreachable': { ja: '{{url}} に接続できません: {{reason}}', en: 'cannot reach {{url}}: {{reason}}' },
  // Why the edge could not load an origin (its Error status; the edge writes these references)
  'originStatus.signingSecretUnreadable': {
    ja: '署名シークレットをこのエッジの鍵(SECRET_KEY)で復号できません',
    en: 'the signing secret cannot be decrypted with this edge key (SECRET_KEY)',
  },
  'originStatus.signingSecretMissing': {
    ja: '署名付きURLが有効ですが署名シークレットがありません',
    en: 'signed URLs are enabled without a signing secret',
  },
  'originStatus.ruleInvalid': {
    ja: '変換ルール {{pattern}} を読み込めません',
    en: 'the conversion rule {{pattern}} cannot be loaded',
  },
  'originStatus.overridableInvalid': {
    ja: '上書き可能なパラメータに変換パラメータ以外が含まれています',
    en: 'the overridable parameters name something that is not a conversion parameter',
  },
  'originStatus.noHost': { ja: 'オリジンのホストがありません', en: 'the origin has no host' },
  'originStatus.s3SecretUnreadable': {
    ja: 'S3のシークレットキーをこのエッジの鍵(SECRET_KEY)で復号できません',
    en: 'the S3 secret key cannot be decrypted with this edge key (SECRET_KEY)',
  },
  'originStatus.s3CredentialsMissing': {
    ja: 'S3オリジンにはアクセスキーIDとシークレットキーが必要です',
    en: 'an S3 origin needs an access key ID and its secret key',
  },
  'originStatus.unknownKind': {
    ja: 'エッジが扱えない種類のオリジンです',
    en: 'the edge does not serve this kind of origin',
  },
  'originStatus.tlsKeyUnreadable': {
    ja: 'SSL証明書の秘密鍵をこのエッジの鍵(SECRET_KEY)で復号できません',
    en: 'the TLS private key cannot be decrypted with this edge key (SECRET_KEY)',
  },
  'originStatus.tlsCertificateUnusable': {
    ja: 'SSL証明書を読み込めません。証明書を再度アップロードしてください',
    en: 'the TLS certificate cannot be loaded; upload it again',
  },

  // Mail (subjects and bodies; both languages in one mail, Japanese first)
  'mail.activation.subject': { ja: '[Ukiyo] アカウントの有効化', en: '[Ukiyo] Activate your account' },
  'mail.activation.body': {
    ja: '{{email}} 様\n\nUkiyo のアカウントが作成されました。次のリンクからアカウントを有効化してください（{{days}}日間有効）。\n{{url}}',
    en: 'Hello {{email}},\n\nAn Ukiyo account was created for you. Activate it with this link (valid for {{days}} days):\n{{url}}',
  },
  'mail.reset.subject': { ja: '[Ukiyo] パスワードの再設定', en: '[Ukiyo] Reset your password' },
  'mail.reset.body': {
    ja: 'パスワード再設定の依頼を受け付けました。次のリンクから新しいパスワードを設定してください（{{minutes}}分間有効、1回のみ使用可能）。\n{{url}}\n\n心当たりがない場合はこのメールを破棄してください。',
    en: 'We received a request to reset your password. Set a new one with this link (valid for {{minutes}} minutes, usable once):\n{{url}}\n\nIf you did not ask for this, ignore this mail.',
  },
  'mail.help.subject': { ja: '[Ukiyo] お問い合わせ', en: '[Ukiyo] Contact form' },
  'mail.help.body': {
    ja: 'ヘルプセンターからお問い合わせがありました（受付番号 {{id}}）。\n\nサービス: {{service}}\n種別: {{category}}\n会社名: {{company}}\n氏名: {{name}}\n返信先: {{email}}\nアカウント: {{account}}\n組織: {{organization}}\n\n{{message}}',
    en: 'A message arrived through the help centre (request {{id}}).\n\nService: {{service}}\nCategory: {{category}}\nCompany: {{company}}\nName: {{name}}\nReply to: {{email}}\nAccount: {{account}}\nOrganization: {{organization}}\n\n{{message}}',
  },
  'mail.helpConfirm.subject': {
    ja: '[Ukiyo] お問い合わせを受け付けました',
    en: '[Ukiyo] We received your message',
  },
  'mail.helpConfirm.body': {
    ja: '{{name}} 様\n\nお問い合わせありがとうございます（受付番号 {{id}}）。2〜3営業日以内に担当者よりご連絡いたします。\n\nサービス: {{service}}\n種別: {{category}}\n\n{{message}}',
    en: 'Dear {{name}},\n\nThank you for your message (request {{id}}). We will reply within 2-3 business days.\n\nService: {{service}}\nCategory: {{category}}\n\n{{message}}',
  },
  'limit.imageNotAvailable': {
    ja: 'このアカウントでは画像変換をご利用いただけません',
    en: 'Image conversion is not available for this account',
  },
  'limit.liveStreamingNotAvailable': {
    ja: 'このアカウントではライブ配信をご利用いただけません',
    en: 'Live streaming is not available for this account',
  },
  'limit.notEnoughPermission': {
    ja: 'このページへのアクセス権限がありません',
    en: 'You do not have access to this page',
  },
} as const satisfies Record<string, MessageText>;

export type MessageKey = keyof typeof MESSAGES;
export type MessageParams = Record<string, string | number>;

/** `key|a=1&b=2`: a message key with its parameters, as it travels in `invalids`. */
export function messageRef(key: MessageKey, params?: MessageParams): string {
  if (!params || Object.keys(params).length === 0) return key;
  const query = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]));
  return `${key}|${query.toString()}`;
}

export function parseMessageRef(ref: string): { key: string; params: Record<string, string> } {
  const bar = ref.indexOf('|');
  if (bar < 0) return { key: ref, params: {} };
  return { key: ref.slice(0, bar), params: Object.fromEntries(new URLSearchParams(ref.slice(bar + 1))) };
}

/** The catalogue of one language, for i18next resources. */
export function messagesIn(language: keyof MessageText): Record<string, string> {
  return Object.fromEntries(Object.entries(MESSAGES).map(([key, text]) => [key, text[language]]));
}
