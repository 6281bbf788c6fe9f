// swagger-ui-dist ships no types; this is the part of its ES bundle the reference page calls.
declare module 'swagger-ui-dist/swagger-ui-es-bundle.js' {
  interface SwaggerUIOptions {
    domNode: HTMLElement;
    url: string;
    deepLinking?: boolean;
    onComplete?: () => void;
  }
  export default function SwaggerUIBundle(options: SwaggerUIOptions): unknown;
}
